#!/usr/bin/env python3
"""Can the Triton linear reach the L2-prefetch read floor on the small weights?

`linear_read_floor.py` (H200, sixteenth session) found that on weights of 4-16 MiB a pure read
gets furthest when each of many small programs asks L2 for its *whole* weight range before the
programmatic-dependent-launch wait (1024x2048: 2.27 us against 3.05 with the loads after the wait;
`logs_h200_20261130l/r4_linear_read_floor_modes.log`). Such programs sit beside the previous
call's programs and pull the weight into L2 while it runs. The shipped configs cannot: their deep
pipelines (up to 6 stages) leave no shared memory for a second program on an SM, and split-K adds
two dependent L2 round trips (partials, counter) after the wait.

This times, as CUDA-graph replay over rotating weights (cold L2, `bench_linear.graph_us`), the
Triton kernel with small footprints (2-3 stages), tiles of 16 or 32 weight rows, 1, 2 or 4 K
splits and ``PREFETCH_K`` covering each program's whole K range, next to cuBLAS and
``kimiops.linear(backend="auto")`` (the committed table, Gluon buckets included). Every variant
is checked against cuBLAS before it is timed.

    PYTHONPATH=$PWD python3 benchmarks/tools/linear_small_programs.py [--shapes 1024x2048,...] [--ms 1,8,32]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import bench_linear as bl  # noqa: E402

from kimiops.gemm import skinny  # noqa: E402
from kimiops.intmath import cdiv  # noqa: E402
from kimiops.testing import rel_err  # noqa: E402

SMALL_SHAPES = "1024x2048,1024x6144,2624x2048,2048x4096,6144x2048"


def candidates(N: int, K: int, M: int, block_ns, splits_list, block_ks, tiles):
    """(label, SkinnyConfig, prefetch_k) for each variant that divides K evenly into its splits."""
    out = []
    for block_n in block_ns:
        for splits in splits_list:
            for block_k in block_ks:
                if K % (splits * block_k):
                    continue
                k_split = K // splits
                for warps, stages in tiles:
                    cfg = skinny.SkinnyConfig(block_n=block_n, block_m=skinny.block_m_for(M), block_k=block_k,
                                              k_split=k_split, num_warps=warps, num_stages=stages, pdl=True)
                    prefetch = max(512, cdiv(k_split, 512) * 512)  # the whole range, in the loop's 512 steps
                    label = f"bn{block_n} s{splits} bk{block_k} w{warps} st{stages}"
                    out.append((label, cfg, prefetch))
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--shapes", default=SMALL_SHAPES)
    p.add_argument("--ms", default="1,8,32")
    p.add_argument("--block-n", default="16,32")
    p.add_argument("--splits", default="1,2,4")
    p.add_argument("--block-k", default="256")
    p.add_argument("--tiles", default="4x2,4x3", help="num_warps x num_stages")
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--rep", type=int, default=12)
    args = p.parse_args()
    torch.manual_seed(0)
    ints = lambda s: [int(v) for v in s.split(",")]  # noqa: E731
    tiles = [tuple(int(v) for v in t.split("x")) for t in args.tiles.split(",")]
    shipped_prefetch = skinny.PREFETCH_K
    print(f"{torch.cuda.get_device_name()} torch {torch.__version__}", flush=True)
    for N, K in bl.parse_shapes(args.shapes):
        weights = bl.rotating_weights(N, K)
        for M in ints(args.ms):
            x, y, cub, auto = bl.cell_baselines(N, K, M, weights, args.warmup, args.rep)
            ref = torch.mm(x, weights[0].t())
            cells = []
            for label, cfg, prefetch in candidates(N, K, M, ints(args.block_n), ints(args.splits),
                                                   ints(args.block_k), tiles):
                skinny.PREFETCH_K = prefetch

                def call(w, cfg=cfg):
                    skinny.skinny_linear(x, w, None, y, cfg)
                try:
                    call(weights[0])
                except Exception as exc:  # noqa: BLE001 - e.g. out of shared memory: reported, skipped
                    print(f"  {N}x{K} M={M} {label}: {type(exc).__name__}", flush=True)
                    continue
                err = rel_err(y.float(), ref.float())
                if not err < 1e-2:
                    raise AssertionError(f"{N}x{K} M={M} {label}: rel err {err}")
                cells.append((label, bl.graph_us(call, weights, args.warmup, args.rep)))
            skinny.PREFETCH_K = shipped_prefetch
            cells.sort(key=lambda c: c[1])
            row = "  ".join(f"{lab} {us:.2f}" for lab, us in cells[:4])
            best = cells[0]
            print(f"{N:>5}x{K:<6} M={M:<3} cuBLAS {cub:6.2f}  auto {auto:6.2f}  best {best[1]:6.2f} "
                  f"({auto / best[1]:.3f}x auto, {cub / best[1]:.2f}x cuBLAS) | {row}", flush=True)
            worst = cells[-1]
            print(f"{'':14} slowest {worst[0]} {worst[1]:.2f}; all: "
                  + ", ".join(f"{lab} {us:.2f}" for lab, us in cells[4:]), flush=True)
        del weights


if __name__ == "__main__":
    main()
