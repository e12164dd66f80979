#!/usr/bin/env python3
"""The Gluon linear's split-K hand-off in distributed shared memory against the global one (H200/H100).

The Gluon kernel (``kimiops/gemm/skinny_gluon.py``) sums its K splits through global memory: each
split stores an fp32 partial, bumps an int32 counter (acq_rel), and the last to arrive loads every
partial: two dependent L2 round trips after the main loop. With ``GluonConfig(cluster=True)`` the
splits of one weight tile are one thread-block cluster: each CTA leaves its partial in its own
shared memory, the cluster syncs, rank 0 reads the partials over distributed shared memory in rank
order (the global path's order, so the same bits) and stores y (runs 1-4 of
``benchmarks/results/logs_20261206_s55/``; runs 1-2 predate the column-major partial, and in runs 1-4
clusters of 16 CTAs, non-portable, also ran: their 16-split rows). This checks, per shape, M and
config, that both paths give identical bits and match cuBLAS, then times both as CUDA-graph replay
over rotating weights (cold L2, ``bench_linear.graph_us``) next to cuBLAS and ``kimiops.linear``.

    PYTHONPATH=$PWD python3 benchmarks/tools/linear_cluster_ab.py [--shapes 1024x2048,...] [--ms 1,8,32]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import bench_linear as bl  # noqa: E402

from kimiops.gemm import skinny_gluon as sg  # noqa: E402
from kimiops.gemm.skinny import exact_k_split  # noqa: E402
from kimiops.intmath import cdiv  # noqa: E402
from kimiops.testing import rel_err  # noqa: E402

SMALL_SHAPES = "1024x2048,1024x6144,2624x2048,2048x4096,2624x6144,6144x2048,7168x2048,2048x7168"


def configs(K: int, split_counts, rings):
    """GluonConfigs (global hand-off) with each of ``split_counts`` splits where K allows it."""
    return [sg.GluonConfig(block_k=block_k, k_split=k_split, num_stages=stages)
            for block_k, stages in rings for splits in split_counts
            if (k_split := exact_k_split(K, block_k, splits)) is not None]


def check_ragged() -> None:
    """Bits of the cluster path against the global path on ragged shapes, with bias and fp32 out."""
    for N, K, M, splits in ((1000, 2000, 3, 4), (130, 1040, 17, 5), (64, 4096, 32, 8), (200, 8192, 1, 16)):
        x = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(N, K, device="cuda", dtype=torch.bfloat16) / K**0.5
        b = torch.randn(N, device="cuda", dtype=torch.bfloat16)
        for out_dtype in (torch.bfloat16, torch.float32):
            cfg = configs(K, (splits,), ((128, 3),))[0]
            y0 = torch.full((M, N), float("nan"), device="cuda", dtype=out_dtype)
            y1 = y0.clone()
            sg.gluon_linear(x, w, b, y0, cfg)
            sg.gluon_linear(x, w, b, y1, sg.GluonConfig(cfg.block_k, cfg.k_split, cfg.num_stages, cluster=True))
            ref = (x.double() @ w.double().t() + b.double())
            print(f"ragged {N}x{K} M={M} splits {splits} out {out_dtype}: bits equal {torch.equal(y0, y1)}, "
                  f"rel err {rel_err(y1.double(), ref):.2e}", flush=True)
            assert torch.equal(y0, y1)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--shapes", default=SMALL_SHAPES)
    p.add_argument("--ms", default="1,8,32")
    p.add_argument("--splits", default="2,3,4,6,8",
                   help="split counts (a cluster takes at most skinny_gluon.MAX_CLUSTER; more run the global hand-off)")
    p.add_argument("--rings", default="128x3,256x2,256x3,256x4", help="block_k x stages")
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--rep", type=int, default=12)
    args = p.parse_args()
    torch.manual_seed(0)
    ints = lambda s: [int(v) for v in s.split(",")]  # noqa: E731
    rings = [tuple(int(v) for v in r.split("x")) for r in args.rings.split(",")]
    print(f"{torch.cuda.get_device_name()} torch {torch.__version__}", flush=True)
    check_ragged()
    for N, K in bl.parse_shapes(args.shapes):
        weights = bl.rotating_weights(N, K)
        for M in ints(args.ms):
            x, y, cub, auto = bl.cell_baselines(N, K, M, weights, args.warmup, args.rep)
            ref = torch.mm(x, weights[0].t())
            rows = []
            for cfg in configs(K, ints(args.splits), rings):
                ccfg = sg.GluonConfig(cfg.block_k, cfg.k_split, cfg.num_stages, cluster=True)
                try:
                    sg.gluon_linear(x, weights[0], None, y, cfg)
                    y0 = y.clone()
                    sg.gluon_linear(x, weights[0], None, y, ccfg)
                except Exception as exc:  # noqa: BLE001 - e.g. out of shared memory: reported, skipped
                    print(f"  {N}x{K} M={M} {cfg}: {type(exc).__name__}: {str(exc)[:200]}", flush=True)
                    continue
                same = torch.equal(y0, y)
                err = rel_err(y.float(), ref.float())
                if not (same and err < 1e-2):
                    raise AssertionError(f"{N}x{K} M={M} {cfg}: bits equal {same}, rel err {err}")
                t_glob = bl.graph_us(lambda w, c=cfg: sg.gluon_linear(x, w, None, y, c), weights, args.warmup, args.rep)
                t_clus = bl.graph_us(lambda w, c=ccfg: sg.gluon_linear(x, w, None, y, c), weights, args.warmup,
                                     args.rep)
                rows.append((cdiv(K, cfg.k_split), cfg.block_k, cfg.num_stages, t_glob, t_clus))
            if not rows:
                continue
            bg = min(rows, key=lambda r: r[3])
            bc = min(rows, key=lambda r: r[4])
            print(f"{N:>5}x{K:<6} M={M:<3} cuBLAS {cub:6.2f}  auto {auto:6.2f}  best global {bg[3]:6.2f} "
                  f"(s{bg[0]} bk{bg[1]} st{bg[2]})  best cluster {bc[4]:6.2f} (s{bc[0]} bk{bc[1]} st{bc[2]})  "
                  f"cluster/auto {bc[4] / auto:.3f}  cuBLAS/best {cub / min(auto, bc[4]):.3f}", flush=True)
            print("      " + ", ".join(f"s{s} bk{bk} st{st} {tg:.2f}/{tc:.2f}" for s, bk, st, tg, tc in rows),
                  flush=True)
        del weights


if __name__ == "__main__":
    main()
