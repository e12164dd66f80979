"""PDL order of the linear kernels (run 7): kimiops.linear(backend="auto") against cuBLAS on the tree
first on sys.path, over four of bench_linear.py's shapes at M = 1 and 8 (CUDA-graph replay over
rotating weights, cold L2, as bench_linear.py times them). Run once on the committed tree (release,
L2 prefetch of the weights, wait) and once on a copy patched by patch_linear_order.py (prefetch,
wait, then release), alternating processes.

    PYTHONPATH=<tree>:$PWD/benchmarks python3 linear_order.py <label>
"""
import math
import sys

import torch

import bench_linear as bl
from kimiops.gemm import skinny
from kimiops.gemm.linear import linear

label = sys.argv[1]
SHAPES = [(1024, 2048), (2624, 6144), (6144, 2048), (4096, 7168)]
ratios = []
cells = []
for N, K in SHAPES:
    weights = bl.rotating_weights(N, K)
    for M in (1, 8):
        x = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
        y = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
        cub = bl.graph_us(lambda w: torch.mm(x, w.t(), out=y), weights, 25, 200)
        ours = bl.graph_us(lambda w: linear(x, w, out=y, backend="auto"), weights, 25, 200)
        ratios.append(cub / ours)
        cells.append(f"{N}x{K} M={M}: {ours:.2f} us (cuBLAS {cub:.2f}, {cub / ours:.2f}x)")
    del weights
geo = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
print(f"{label:>8} ({skinny.__file__}): geomean {geo:.3f}x | " + "; ".join(cells), flush=True)
