"""Eager (no CUDA graph) per-call time of ``kimiops.linear`` against ``F.linear`` on one GPU.

Back-to-back calls without synchronization in between (one sync per 1000 calls), so at decode
sizes the figure is the host time per call (Python wrapper + launch) as a decode loop pays it;
``kimiops.bench.timing.host_us`` times one synchronized call instead. Median of 5 runs of 1000
calls. Usage: ``PYTHONPATH=$PWD python3 benchmarks/eager_linear_overhead.py [--device cpu --shapes 64x64]``
(on CPU the figure is the wrapper's host time plus torch's CPU GEMM, so use a tiny shape).
"""

from __future__ import annotations

import argparse

import torch
import torch.nn.functional as F

import kimiops
from kimiops.bench.timing import loop_us

SHAPES = [(1024, 2048), (2048, 4096), (6144, 6144)]  # (N, K)
MS = (1, 32)


def per_call_us(fn, sync) -> float:
    return loop_us(fn, n=1000, rounds=5, sync=sync, warmup=200)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--shapes", default=",".join(f"{n}x{k}" for n, k in SHAPES), help="NxK,...")
    args = ap.parse_args()
    sync = torch.cuda.synchronize if args.device.startswith("cuda") else (lambda: None)
    torch.manual_seed(0)
    for shape in args.shapes.split(","):
        N, K = map(int, shape.split("x"))
        for M in MS:
            x = torch.randn(M, K, device=args.device, dtype=torch.bfloat16)
            w = torch.randn(N, K, device=args.device, dtype=torch.bfloat16)
            res = {
                "F.linear": per_call_us(lambda: F.linear(x, w), sync),
                "kimiops auto": per_call_us(lambda: kimiops.linear(x, w), sync),
                "kimiops cublas": per_call_us(lambda: kimiops.linear(x, w, backend="cublas"), sync),
            }
            if args.device.startswith("cuda"):  # on CPU tensors the kernel needs Triton's interpreter
                res["kimiops triton"] = per_call_us(lambda: kimiops.linear(x, w, backend="triton"), sync)
            print(f"{N}x{K} M{M}: " + ", ".join(f"{k} {v:.2f} us" for k, v in res.items()), flush=True)


if __name__ == "__main__":
    main()
