#!/usr/bin/env python3
"""Every K split count for the Triton linear's weight-streaming shapes, against the committed table (H200/H100).

``bench_linear.py`` offers the Triton kernel only the wave-balanced splits of ``skinny.split_candidates``
(no split when there are >= 0.45 x 132 weight tiles, else the fewest splits whose programs fill the SMs
to >= 90%, and the next such). The Gluon sweep times every split count from 2 to 8 since the fifty-fifth
session, which found 2 splits on 2624x2048 that the rule never offered. This does the same for the
Triton kernel: per shape and M, the tile of the committed large-weight buckets (64 weight rows, 4 warps,
PDL, ``block_m_for(M)`` token rows) with K tiles of 128 and 256, 6 or 3 stages (clamped to shared memory)
and every split count in ``--splits``, each checked against
cuBLAS and timed as CUDA-graph replay over rotating weights (cold L2, ``bench_linear.graph_us``) next
to cuBLAS and ``kimiops.linear(backend="auto")``. The K split is a shape-level choice (it fixes the
order of the sum over K, so every M of a shape shares one), so the summary per shape is the geomean
over M of the best time per (block_k, splits) against ``auto``.

    PYTHONPATH=$PWD python3 benchmarks/tools/linear_triton_splits.py [--shapes 6144x6144,...] [--ms 1,8,32]
"""
from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import bench_linear as bl  # noqa: E402

from kimiops.arch import device_family  # noqa: E402
from kimiops.gemm import dispatch  # noqa: E402
from kimiops.gemm.skinny import SkinnyConfig, block_m_for, exact_k_split, fit_stages, skinny_linear  # noqa: E402
from kimiops.testing import rel_err  # noqa: E402

#: The shapes whose committed sm90 table (fifty-fifth session) runs the Triton kernel in some bucket.
TRITON_SHAPES = "2624x6144,6144x6144,2048x4096,7168x2048,2048x7168,4096x7168,7168x18432"


def variants(K: int, M: int, split_counts, block_ks, stage_counts):
    """``(block_k, splits, config)`` for every K tile, split count K allows and pipeline depth: 64-row
    weight tiles, 4 warps, PDL on (the committed table's large-weight Triton tiles), stages clamped to
    shared memory."""
    out = []
    for block_k in block_ks:
        for splits in split_counts:
            k_split = exact_k_split(K, block_k, splits)
            if k_split is None:
                continue
            for stages in dict.fromkeys(fit_stages(64, block_m_for(M), block_k, s) for s in stage_counts):
                out.append((block_k, splits, SkinnyConfig(64, block_m_for(M), block_k, k_split, 4, stages, True)))
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--shapes", default=TRITON_SHAPES)
    p.add_argument("--ms", default="1,4,8,16,32")
    p.add_argument("--splits", default="1,2,3,4,5,6,7,8")
    p.add_argument("--block-k", default="128,256")
    p.add_argument("--stages", default="6,3")
    p.add_argument("--workers", type=int, default=16, help="processes compiling the variants up front")
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--rep", type=int, default=12)
    args = p.parse_args()
    torch.manual_seed(0)
    ints = lambda s: [int(v) for v in s.split(",")]  # noqa: E731
    family = device_family(torch.device("cuda"))
    print(f"{torch.cuda.get_device_name()} family {family} torch {torch.__version__}", flush=True)
    shapes, ms = bl.parse_shapes(args.shapes), ints(args.ms)
    cells = [(N, K, M) for N, K in shapes for M in ms]
    jobs = [(N, K, M, dataclasses.asdict(cfg), False, "bfloat16") for N, K, M in cells
            for _, _, cfg in variants(K, M, ints(args.splits), ints(args.block_k), ints(args.stages))]
    bl.precompile(jobs, args.workers, lambda msg: print(msg, flush=True))
    for N, K in shapes:
        weights = bl.rotating_weights(N, K)
        per_variant: dict[tuple[int, int], list[float]] = {}  # (block_k, splits) -> auto / best variant per M
        committed = dispatch.triton_config(family, 1, N, K)
        for M in ms:
            x, y, cub, auto = bl.cell_baselines(N, K, M, weights, args.warmup, args.rep)
            ref = torch.mm(x, weights[0].t())
            rows = []
            for block_k, splits, cfg in variants(K, M, ints(args.splits), ints(args.block_k), ints(args.stages)):
                try:
                    skinny_linear(x, weights[0], None, y, cfg)
                    torch.cuda.synchronize()
                except Exception as exc:  # noqa: BLE001 - e.g. out of shared memory: reported, skipped
                    print(f"  {N}x{K} M={M} {cfg}: {type(exc).__name__}: {str(exc)[:200]}", flush=True)
                    continue
                err = rel_err(y.float(), ref.float())
                if not err < 1e-2:
                    raise AssertionError(f"{N}x{K} M={M} {cfg}: rel err against cuBLAS {err}")
                us = bl.graph_us(lambda w, c=cfg: skinny_linear(x, w, None, y, c), weights, args.warmup, args.rep)
                rows.append((block_k, splits, cfg, us))
            for variant in dict.fromkeys((bk, sp) for bk, sp, _, _ in rows):
                fastest = min(us for bk, sp, _, us in rows if (bk, sp) == variant)
                per_variant.setdefault(variant, []).append(auto / fastest)
            best = min(rows, key=lambda r: r[3])
            print(f"{N:>5}x{K:<6} M={M:<3} cuBLAS {cub:6.2f}  auto {auto:6.2f} "
                  f"({type(dispatch.auto_config(family, M, N, K)).__name__})  best Triton {best[3]:6.2f} "
                  f"(bk{best[0]} s{best[1]} bm{best[2].block_m} w{best[2].num_warps} st{best[2].num_stages})  "
                  f"auto/best {auto / best[3]:.3f}", flush=True)
            print("      " + ", ".join(f"bk{bk} s{s} st{c.num_stages} {us:.2f}" for bk, s, c, us in rows), flush=True)
        every_m = {v: r for v, r in per_variant.items() if len(r) == len(ms)}
        ranked = sorted(every_m.items(), key=lambda kv: -bl.geomean(kv[1]))
        shown = ", ".join(f"bk{bk} s{s} {bl.geomean(r):.3f}" for (bk, s), r in ranked[:4])
        now = f"bn{committed.block_n} bk{committed.block_k} k_split {committed.k_split}"
        print(f"{N}x{K}: geomean over M of auto / variant (variants that ran at every M), best four: {shown} "
              f"(committed Triton: {now})", flush=True)
        del weights


if __name__ == "__main__":
    main()
