"""Eager (no CUDA graph) per-call time of ``kimiops.linear`` against ``F.linear`` on one GPU.

Back-to-back calls without synchronization in between (one sync per 1000 calls), so at decode
sizes the figure is the host time per call (Python wrapper + launch), the cost an eager caller pays.
Median of 5 runs of 1000 calls. Usage: ``PYTHONPATH=$PWD python3 benchmarks/eager_linear_overhead.py``.
"""
import time, torch, kimiops
import torch.nn.functional as F
torch.manual_seed(0)
for N, K in [(1024, 2048), (2048, 4096), (6144, 6144)]:
    for M in (1, 32):
        x = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(N, K, device="cuda", dtype=torch.bfloat16)
        res = {}
        for name, fn in [("F.linear", lambda: F.linear(x, w)), ("kimiops auto", lambda: kimiops.linear(x, w)),
                         ("kimiops cublas", lambda: kimiops.linear(x, w, backend="cublas"))]:
            for _ in range(200): fn()
            torch.cuda.synchronize()
            best = []
            for _ in range(5):
                t0 = time.perf_counter()
                for _ in range(1000): fn()
                torch.cuda.synchronize()
                best.append((time.perf_counter() - t0) / 1000 * 1e6)
            res[name] = sorted(best)[2]
        print(f"{N}x{K} M{M}: " + ", ".join(f"{k} {v:.2f} us" for k, v in res.items()), flush=True)
