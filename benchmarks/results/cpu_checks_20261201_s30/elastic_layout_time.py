"""Host time of the elastic replay's layout check (``chunk_layout.elastic_layout``) on the CPU machine."""
import timeit

from kimiops.kda.kernels.chunk_layout import elastic_layout

for T, N in ((300, 1), (300, 4), (3000, 8)):
    n = 20000
    us = min(timeit.repeat(lambda: elastic_layout(T, N, 32, 128), number=n, repeat=5)) / n * 1e6
    print(f"elastic_layout(T={T}, N={N}, HV=32, K=128): {us:.2f} us")
