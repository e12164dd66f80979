"""Host time of KDABackend.decode's own Python around the op call, batch mode (one token per request,
no query_start_loc), on the CPU machine: the op call itself (``_call``) is replaced by one that
returns a preallocated o, so only the backend's checks, views and output reshaping are timed.
H = HV = 32, K = V = 128, bf16, N = 1 and 8, the inputs as [1, N, ...] and as [N, ...]."""
import time

import torch

import kimiops

H, K = 32, 128
be = kimiops.KDABackend(H, K, K)
print(f"kimiops {kimiops.__file__}, torch {torch.__version__}")
for N in (1, 8):
    o = torch.empty(N, 1, H, K, dtype=torch.bfloat16)
    be._call = lambda *a, **kw: (o, None)  # noqa: E731
    q, k, v, g = (torch.randn(1, N, H, K, dtype=torch.bfloat16) for _ in range(4))
    beta = torch.randn(1, N, H, dtype=torch.bfloat16)
    pool, idx = torch.zeros(N + 1, H, K, K), torch.arange(N, dtype=torch.int32)
    for rank, args in ((4, (q, k, v, g, beta)), (3, tuple(x[0] for x in (q, k, v, g, beta)))):
        def call():
            return be.decode(*args, ssm_states=pool, cache_indices=idx)
        call()
        best = []
        for _ in range(3):
            t0 = time.perf_counter()
            for _ in range(20000):
                call()
            best.append((time.perf_counter() - t0) / 20000 * 1e6)
        print(f"N={N} inputs rank {rank}: {min(best):.2f} us per call (best of 3 rounds of 20000)")
