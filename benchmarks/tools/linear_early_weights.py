#!/usr/bin/env python3
"""Does streaming more of the weight before the PDL wait bring `kimiops.linear` toward the read
floor of `linear_read_floor.py`?

`linear_read_floor.py` (H200) found that a pure weight read reaches ~1.3 us + bytes / 4.1 TB/s
only when its loads are issued before the programmatic-dependent-launch wait (the next call's
stream overlaps the previous call's tail), and that with the loads after the wait it is no faster
than the shipped kernel. The shipped kernel asks L2 for ``PREFETCH_K`` = 512 elements of each of its
weight rows before the wait, and its 6-stage pipeline takes so much shared memory that a program
of the next call cannot sit beside one of the running call. Per shape and M this times, as
CUDA-graph replay over rotating weights (cold L2, like `bench_linear.py`), the table's config
with ``num_stages`` in {table, the most that lets two programs share an SM} times ``PREFETCH_K``
in {512, 2048, 8192}, next to cuBLAS; every variant's output is checked against cuBLAS first.

    PYTHONPATH=$PWD python3 benchmarks/tools/linear_early_weights.py [--shapes 6144x2048,...] [--ms 1,16]
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
from kimiops.gemm import dispatch, skinny  # noqa: E402
from kimiops.testing import rel_err  # noqa: E402

SMEM_PER_SM = 227 * 1024


def shared_stages(cfg) -> int:
    """Most stages with which two programs of this tile fit one SM's shared memory (>= 2)."""
    stage = (cfg.block_n + cfg.block_m) * cfg.block_k * 2
    return max(2, (SMEM_PER_SM // 2 - 4096) // stage)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--shapes", default=",".join(f"{n}x{k}" for n, k in bl.SHAPES))
    p.add_argument("--ms", default="1,16")
    p.add_argument("--prefetch", default="512,2048,8192")
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--rep", type=int, default=12)
    args = p.parse_args()
    torch.manual_seed(0)
    fam = device_family(torch.device("cuda"))
    prefetches = [int(v) for v in args.prefetch.split(",")]
    shipped_prefetch = skinny.PREFETCH_K
    for N, K in bl.parse_shapes(args.shapes):
        weights = bl.rotating_weights(N, K)
        for M in (int(m) for m in args.ms.split(",")):
            x = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
            y = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
            base = dispatch.triton_config(fam, M, N, K)
            ref = torch.mm(x, weights[0].t())
            cub = bl.graph_us(lambda w: torch.mm(x, w.t(), out=y), weights, args.warmup, args.rep)
            cells = []
            for stages in sorted({base.num_stages, shared_stages(base)}, reverse=True):
                for pf in prefetches:
                    cfg = dataclasses.replace(base, num_stages=stages, pdl=True)
                    skinny.PREFETCH_K = pf

                    def call(w, cfg=cfg):
                        skinny.skinny_linear(x, w, None, y, cfg)
                    call(weights[0])
                    err = rel_err(y.float(), ref.float())
                    if not err < 1e-2:
                        raise AssertionError(f"{N}x{K} M={M} stages={stages} prefetch={pf}: rel err {err}")
                    cells.append((stages, pf, bl.graph_us(call, weights, args.warmup, args.rep)))
            skinny.PREFETCH_K = shipped_prefetch
            best = min(cells, key=lambda c: c[2])
            row = "  ".join(f"s{s}/pf{pf} {us:6.2f}" for s, pf, us in cells)
            print(f"{N:>5}x{K:<6} M={M:<3} cuBLAS {cub:6.2f}  {row}  | best s{best[0]}/pf{best[1]} "
                  f"{best[2]:.2f} us ({cub / best[2]:.2f}x cuBLAS)", flush=True)
        del weights


if __name__ == "__main__":
    main()
