#!/usr/bin/env python3
"""GPU check of the experimental Gluon linear (``kimiops/gemm/skinny_gluon.py``, weight tiles sent
by TMA before the PDL wait): correctness against an fp64 reference and cuBLAS's error, run-to-run
bits, then CUDA-graph replay over rotating weights (cold L2, as ``bench_linear.py``) next to the
shipped table kernel (``linear(backend="auto")``) and cuBLAS, in one process.

Per (shape, M) it times every (block_k, stages) of :data:`RINGS` with every K split of
``skinny.split_candidates`` (all weight tiles requested before the wait), then the best one with
``x_early`` (x's tiles also before the wait: the dependency on the previous kernel ignored, a
diagnostic of what the structure could reach, never a usable result). The summary is the geomean
over the cells of cuBLAS / auto and of cuBLAS / min(auto, best Gluon).

    PYTHONPATH=$PWD python3 benchmarks/tools/linear_gluon_check.py [--shapes 6144x2048,...] [--ms 1,8,16,32]
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import bench_linear as bl  # noqa: E402

from kimiops.gemm.linear import linear  # noqa: E402
from kimiops.gemm.skinny import split_candidates  # noqa: E402
from kimiops.gemm.skinny_gluon import BLOCK_N, skinny_gluon_linear  # noqa: E402
from kimiops.testing import rel_err  # noqa: E402

#: (block_k, stages): rings of 40-164 KB (two programs share an SM below ~113 KB).
RINGS = [(128, 3), (128, 4), (128, 5), (128, 6), (256, 2), (256, 3), (256, 4)]


def check_correctness(log) -> bool:
    ok = True
    cases = [(1, 256, 2048, False, None), (5, 200, 1000, True, None), (16, 6144, 2048, True, None),
             (3, 2624, 6144, False, 1536), (1, 1024, 2048, True, 256), (32, 2048, 4096, True, 1024),
             (17, 1000, 3000, False, 512)]
    for M, N, K, bias, k_split in cases:
        g = torch.Generator(device="cuda").manual_seed(M * N + K)
        x = torch.randn(M, K, device="cuda", generator=g).to(torch.bfloat16)
        w = (torch.randn(N, K, device="cuda", generator=g) / K**0.5).to(torch.bfloat16)
        b = torch.randn(N, device="cuda", generator=g).to(torch.bfloat16) if bias else None
        ref = x.double() @ w.double().t() + (b.double() if bias else 0)
        cub = torch.nn.functional.linear(x, w, b)
        for block_k, stages in [(128, 4), (256, 3)]:
            for early, pdl in [(stages, True), (1, True), (stages, False)]:
                for out_dtype in (torch.bfloat16, torch.float32):
                    kw = dict(block_k=block_k, stages=stages, early=early, pdl=pdl,
                              k_split=None if k_split is None else max(k_split, block_k))
                    y = torch.full((M, N), float("nan"), device="cuda", dtype=out_dtype)
                    skinny_gluon_linear(x, w, b, y, **kw)
                    y2 = torch.full_like(y, float("nan"))
                    skinny_gluon_linear(x, w, b, y2, **kw)
                    torch.cuda.synchronize()
                    err, cerr = rel_err(y, ref), rel_err(cub, ref)
                    good = err <= max(1.5 * cerr, 1e-5) if out_dtype == torch.bfloat16 else err <= 1e-4
                    good = good and torch.equal(y, y2)
                    ok &= good
                    log(f"  M={M} N={N} K={K} bias={bias} {kw} out={out_dtype}: rel err {err:.3g} "
                        f"(cuBLAS {cerr:.3g}), repeat equal {torch.equal(y, y2)} -> {'ok' if good else 'FAIL'}")
    return ok


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--shapes", default=",".join(f"{n}x{k}" for n, k in bl.SHAPES))
    p.add_argument("--ms", default="1,8,16,32")
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--rep", type=int, default=12)
    p.add_argument("--json", default=None)
    args = p.parse_args()
    if not check_correctness(lambda s: print(s, flush=True)):
        raise SystemExit("correctness check failed: no timings")
    rows = []
    for N, K in bl.parse_shapes(args.shapes):
        weights = bl.rotating_weights(N, K)
        for M in (int(m) for m in args.ms.split(",")):
            x = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
            y = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
            cub = bl.graph_us(lambda w: torch.mm(x, w.t(), out=y), weights, args.warmup, args.rep)
            auto = bl.graph_us(lambda w: linear(x, w, out=y, backend="auto"), weights, args.warmup, args.rep)
            cells = {}
            for block_k, stages in RINGS:
                for k_split in split_candidates(N, K, BLOCK_N, block_k):
                    kw = dict(block_k=block_k, stages=stages, k_split=k_split)
                    try:
                        us = bl.graph_us(lambda w: skinny_gluon_linear(x, w, None, y, **kw), weights, args.warmup,
                                         args.rep)
                    except Exception as exc:  # noqa: BLE001 - e.g. out of shared memory
                        print(f"  {N}x{K} M={M} {kw}: {type(exc).__name__}: {str(exc)[:160]}")
                        continue
                    cells[f"bk{block_k}/s{stages}/ks{k_split}"] = (us, kw)
            best_name, (best, best_kw) = min(cells.items(), key=lambda c: c[1][0])
            diag = bl.graph_us(lambda w: skinny_gluon_linear(x, w, None, y, x_early=True, **best_kw), weights,
                               args.warmup, args.rep)
            rows.append(dict(N=N, K=K, M=M, cublas_us=cub, auto_us=auto, gluon_best_us=best, gluon_best=best_name,
                             gluon_x_early_us=diag, gluon_us={n: c[0] for n, c in cells.items()}))
            top = sorted(cells.items(), key=lambda c: c[1][0])[:4]
            print(f"{N:>5}x{K:<6} M={M:<3} cuBLAS {cub:6.2f}  auto {auto:6.2f}  gluon best {best:6.2f} ({best_name})  "
                  f"x-early diag {diag:6.2f} | {cub / auto:.2f}x -> {cub / min(auto, best):.2f}x cuBLAS | next: "
                  + ", ".join(f"{n} {c[0]:.2f}" for n, c in top[1:]), flush=True)
        del weights
    gm_auto = bl.geomean(r["cublas_us"] / r["auto_us"] for r in rows)
    gm_both = bl.geomean(r["cublas_us"] / min(r["auto_us"], r["gluon_best_us"]) for r in rows)
    gm_gl = bl.geomean(r["cublas_us"] / r["gluon_best_us"] for r in rows)
    gm_diag = bl.geomean(r["cublas_us"] / r["gluon_x_early_us"] for r in rows)
    print(f"geomean over {len(rows)} cells: auto {gm_auto:.3f}x, gluon best {gm_gl:.3f}x, min(auto, gluon) "
          f"{gm_both:.3f}x, x-early diagnostic {gm_diag:.3f}x cuBLAS")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
