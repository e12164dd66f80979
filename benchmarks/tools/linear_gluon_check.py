#!/usr/bin/env python3
"""GPU check of the experimental Gluon linear (``kimiops/gemm/skinny_gluon.py``, weight tiles sent
by TMA before the PDL wait): correctness against an fp64 reference and cuBLAS's error, run-to-run
bits, and CUDA-graph replay over rotating weights (cold L2, as ``bench_linear.py``) next to the
shipped table kernel (``linear(backend="auto")``) and cuBLAS, in one process.

The prototype has no split-K, so only shapes with enough 64-row weight tiles are timed by default
(N >= 4096: 64-112 programs).

    PYTHONPATH=$PWD python3 benchmarks/tools/linear_gluon_check.py [--shapes 6144x2048,...] [--ms 1,8,16]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import bench_linear as bl  # noqa: E402

from kimiops.gemm.linear import linear  # noqa: E402
from kimiops.gemm.skinny_gluon import skinny_gluon_linear  # noqa: E402
from kimiops.testing import rel_err  # noqa: E402

VARIANTS = [(128, s, True) for s in (3, 4, 5, 6)] + [(256, s, True) for s in (2, 3)] + [(128, 4, False)]


def check_correctness(log) -> bool:
    ok = True
    for M, N, K, bias in [(1, 256, 2048, False), (5, 200, 1000, True), (16, 6144, 2048, True), (3, 2624, 6144, False)]:
        g = torch.Generator(device="cuda").manual_seed(M * N + K)
        x = torch.randn(M, K, device="cuda", generator=g).to(torch.bfloat16)
        w = (torch.randn(N, K, device="cuda", generator=g) / K**0.5).to(torch.bfloat16)
        b = torch.randn(N, device="cuda", generator=g).to(torch.bfloat16) if bias else None
        ref = x.double() @ w.double().t() + (b.double() if bias else 0)
        cub = torch.nn.functional.linear(x, w, b)
        for block_k, stages, pdl in VARIANTS:
            for out_dtype in (torch.bfloat16, torch.float32):
                y = torch.full((M, N), float("nan"), device="cuda", dtype=out_dtype)
                skinny_gluon_linear(x, w, b, y, block_k=block_k, stages=stages, pdl=pdl)
                y2 = torch.empty_like(y)
                skinny_gluon_linear(x, w, b, y2, block_k=block_k, stages=stages, pdl=pdl)
                torch.cuda.synchronize()
                err, cerr = rel_err(y, ref), rel_err(cub, ref)
                good = err <= max(1.5 * cerr, 1e-5) if out_dtype == torch.bfloat16 else err <= 1e-4
                good = good and torch.equal(y, y2)
                ok &= good
                log(f"  M={M} N={N} K={K} bias={bias} bk={block_k} stages={stages} pdl={pdl} out={out_dtype}: "
                    f"rel err {err:.3g} (cuBLAS {cerr:.3g}), repeat equal {torch.equal(y, y2)} -> {'ok' if good else 'FAIL'}")
    return ok


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--shapes", default="6144x2048,7168x2048,6144x6144,4096x7168,7168x18432")
    p.add_argument("--ms", default="1,8,16")
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--rep", type=int, default=12)
    args = p.parse_args()
    if not check_correctness(lambda s: print(s, flush=True)):
        raise SystemExit("correctness check failed: no timings")
    for N, K in bl.parse_shapes(args.shapes):
        weights = bl.rotating_weights(N, K)
        for M in (int(m) for m in args.ms.split(",")):
            x = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
            y = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
            cub = bl.graph_us(lambda w: torch.mm(x, w.t(), out=y), weights, args.warmup, args.rep)
            auto = bl.graph_us(lambda w: linear(x, w, out=y, backend="auto"), weights, args.warmup, args.rep)
            cells = []
            for block_k, stages, pdl in VARIANTS:
                try:
                    us = bl.graph_us(lambda w: skinny_gluon_linear(x, w, None, y, block_k=block_k, stages=stages, pdl=pdl),
                                     weights, args.warmup, args.rep)
                except Exception as exc:  # noqa: BLE001 - e.g. out of shared memory
                    print(f"  {N}x{K} M={M} bk{block_k} s{stages}: {type(exc).__name__}: {str(exc)[:200]}")
                    continue
                cells.append((f"bk{block_k}/s{stages}{'' if pdl else '/nopdl'}", us))
            best = min(cells, key=lambda c: c[1])
            print(f"{N:>5}x{K:<6} M={M:<3} cuBLAS {cub:6.2f}  auto {auto:6.2f}  " + "  ".join(f"{n} {u:6.2f}" for n, u in cells)
                  + f"  | best {best[0]} {best[1]:.2f} us: {cub / best[1]:.2f}x cuBLAS, {auto / best[1]:.2f}x auto",
                  flush=True)
        del weights


if __name__ == "__main__":
    main()
