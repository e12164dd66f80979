"""Eager (no CUDA graph) per-call time of ``kimiops.linear`` against ``F.linear`` on one GPU.

Back-to-back calls without synchronization in between (one sync per 1000 calls), so at decode
sizes the figure is the host time per call (Python wrapper + launch) as a decode loop pays it;
``kimiops.bench.timing.host_us`` times one synchronized call instead. Median of 5 runs of 1000
calls. Usage: ``PYTHONPATH=$PWD python3 benchmarks/eager_linear_overhead.py``.
"""

from __future__ import annotations

import time

import torch
import torch.nn.functional as F

import kimiops

SHAPES = [(1024, 2048), (2048, 4096), (6144, 6144)]  # (N, K)
MS = (1, 32)


def per_call_us(fn, calls: int = 1000, runs: int = 5) -> float:
    for _ in range(200):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) / calls * 1e6)
    return sorted(times)[runs // 2]


def main() -> None:
    torch.manual_seed(0)
    for N, K in SHAPES:
        for M in MS:
            x = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
            w = torch.randn(N, K, device="cuda", dtype=torch.bfloat16)
            res = {
                "F.linear": per_call_us(lambda: F.linear(x, w)),
                "kimiops auto": per_call_us(lambda: kimiops.linear(x, w)),
                "kimiops cublas": per_call_us(lambda: kimiops.linear(x, w, backend="cublas")),
            }
            print(f"{N}x{K} M{M}: " + ", ".join(f"{k} {v:.2f} us" for k, v in res.items()), flush=True)


if __name__ == "__main__":
    main()
