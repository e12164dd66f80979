"""Why fuzz_linear.py checks row-order bits only on CUDA: on the CPU, Triton's interpreter computes
tl.dot with numpy (OpenBLAS), whose fp32 products round a row differently by its position.

    PYTHONPATH=$PWD python3 benchmarks/results/cpu_checks_20261205_s46/interpreter_row_order.py
"""
import os

os.environ["TRITON_INTERPRET"] = "1"

import numpy as np  # noqa: E402
import torch  # noqa: E402

from kimiops.gemm.linear import linear  # noqa: E402
from kimiops.gemm.skinny import default_config  # noqa: E402

rng = np.random.default_rng(0)
a = torch.randn(16, 128).half().float().numpy()  # fp16 values, products exact in fp32
b = torch.randn(128, 64).half().float().numpy()
changed = sum(not np.array_equal((a @ b)[p], a[p] @ b) for p in (rng.permutation(16) for _ in range(20)))
print(f"numpy {np.__version__}: [16, 128] x [128, 64], {changed} of 20 row permutations change bits")
g = torch.Generator().manual_seed(1)
for M, N, K in ((16, 128, 512), (32, 128, 512)):
    x = torch.randn(M, K, generator=g).half()
    w = (torch.randn(N, K, generator=g) / K ** 0.5).half()
    y = linear(x, w, backend="triton")
    bad = 0
    for _ in range(20):
        perm = torch.randperm(M, generator=g)
        bad += not torch.equal(linear(x[perm], w, backend="triton"), y[perm])
    print(f"kimiops.linear triton in the interpreter, M={M} N={N} K={K} (block_m "
          f"{default_config(N, K, M).block_m}): {bad} of 20 row permutations change bits")
