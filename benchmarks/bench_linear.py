#!/usr/bin/env python3
"""kimiops.linear vs cuBLAS at decode-sized M; sweeps kernel configs and writes the auto table.

Run on the GPU, from the repository root::

    PYTHONPATH=$PWD python3 benchmarks/bench_linear.py --out benchmarks/results \\
        --table-out kimiops/gemm/tables/sm90.json

What it does, in one process:

1. Copy bandwidth: median of a 1 GiB device-to-device copy, counting read + write.
2. Sweep, per (N, K) and M: cuBLAS (``torch.mm``, the GEMM ``torch.addmm`` runs without bias)
   and the Triton kernel over ``SPLIT_TARGETS x TILE_CANDIDATES`` of
   :mod:`kimiops.gemm.skinny`. Each is timed as CUDA-graph replay of one call per weight copy
   over enough rotating copies (>= 3x the 60 MB L2) that every call streams its weight from HBM;
   ``triton.testing.do_bench(return_mode="median")`` times the replay (it also flushes L2
   before each replay); time per call = replay time / copies. Every candidate's output is
   checked against cuBLAS before its time counts.
3. Table: per (N, K) the K split that maximizes the geometric mean over M of the speedup auto
   would get (the K split is shared by all M so that rows are batch invariant); per M the
   fastest tile, kept only where it beats cuBLAS by ``--margin``. Written to ``--table-out``.
4. Verification: the public ``kimiops.gemm.linear.linear(backend="auto")`` with that table,
   timed the same way (graph, cold L2) and eagerly (do_bench, L2 flushed), against cuBLAS.
   Speedups, % of copy bandwidth (bytes = weight + x + y) and the acceptance summary are
   written to ``--out``/linear_<family>.json.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import functools
import json
import math
import shutil
import tempfile
import time
from pathlib import Path

import torch
import triton
from triton.testing import do_bench

from kimiops.arch import device_family
from kimiops.gemm import dispatch
from kimiops.gemm.linear import linear
from kimiops.gemm.skinny import SPLIT_TARGETS, TILE_CANDIDATES, SkinnyConfig, block_k_for, block_m_for, k_split_for, skinny_linear

SHAPES = [(1024, 2048), (1024, 6144), (2624, 2048), (2624, 6144), (6144, 2048), (6144, 6144),
          (2048, 4096), (7168, 2048), (2048, 7168), (4096, 7168), (7168, 18432)]
MS = (1, 4, 8, 16, 32)
L2_BYTES = 60 * 2**20
COLD_BYTES = 3 * L2_BYTES
MAX_COPIES = 64
BW_WEIGHT_BYTES = 24 * 2**20  # acceptance: weights >= 24 MB at >= 80% of copy bandwidth


def copy_bandwidth(warmup: int, rep: int) -> float:
    """Bytes per second of a 1 GiB device-to-device copy, counting read + write."""
    n = 2**30
    src = torch.empty(n, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    ms = do_bench(lambda: dst.copy_(src), warmup=warmup, rep=rep, return_mode="median")
    return 2 * n / (ms * 1e-3)


def rotating_weights(N: int, K: int) -> list[torch.Tensor]:
    """Enough bf16 ``[N, K]`` copies (>= COLD_BYTES in all, at least 2) that L2 never holds the next one."""
    copies = max(2, min(MAX_COPIES, math.ceil(COLD_BYTES / (N * K * 2))))
    return [torch.randn(N, K, device="cuda", dtype=torch.bfloat16) / K**0.5 for _ in range(copies)]


@functools.cache
def _side_stream() -> torch.cuda.Stream:
    return torch.cuda.Stream()


def graph_us(call, weights, warmup: int, rep: int) -> float:
    """Median microseconds per ``call(w)`` under CUDA-graph replay over ``weights`` (cold L2)."""
    side = _side_stream()  # one warm-up stream: kimiops' split-K scratch is cached per stream
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for w in weights[:2]:
            call(w)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for w in weights:
            call(w)
    ms = do_bench(graph.replay, warmup=warmup, rep=rep, return_mode="median")
    del graph
    return ms * 1e3 / len(weights)


def eager_us(call, warmup: int, rep: int) -> float:
    return do_bench(call, warmup=warmup, rep=rep, return_mode="median") * 1e3


def rel_err(a: torch.Tensor, b: torch.Tensor) -> float:
    return float((a.double() - b.double()).norm() / b.double().norm().clamp_min(1e-30))


def geomean(values) -> float:
    values = list(values)
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def sweep_shape(N, K, ms, weights, args, log):
    """Times cuBLAS and every candidate for each M; returns (cublas_us, {k_split: {M: [(cfg, us)]}})."""
    block_k = block_k_for(K)
    k_splits = sorted({k_split_for(N, K, block_k, t) for t in SPLIT_TARGETS})
    cublas, ours = {}, {ks: {} for ks in k_splits}
    for M in ms:
        x = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
        y = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
        cublas[M] = graph_us(lambda w: torch.mm(x, w.t(), out=y), weights, args.warmup, args.rep)
        expect = torch.mm(x, weights[0].t())
        for ks in k_splits:
            ours[ks][M] = []
            for block_n, num_warps, num_stages in TILE_CANDIDATES:
                cfg = SkinnyConfig(block_n=block_n, block_m=block_m_for(M), block_k=block_k, k_split=ks,
                                   num_warps=num_warps, num_stages=num_stages)
                skinny_linear(x, weights[0], None, y, cfg)
                err = rel_err(y, expect)
                if not err <= 1e-2:
                    log(f"  INVALID {cfg} at M={M}: rel err vs cuBLAS {err:.3g}")
                    ours[ks][M].append((cfg, None))
                    continue
                us = graph_us(lambda w: skinny_linear(x, w, None, y, cfg), weights, args.warmup, args.rep)
                ours[ks][M].append((cfg, us))
    return cublas, ours


def choose(cublas, ours, margin):
    """K split maximizing the geomean of auto's speedup over M; per M the best tile or cuBLAS."""
    def best(ks, M):
        timed = [(us, cfg) for cfg, us in ours[ks][M] if us is not None]
        return min(timed, key=lambda t: t[0]) if timed else (math.inf, None)

    def auto_speedup(ks, M):
        s = cublas[M] / best(ks, M)[0]
        return s if s >= margin else 1.0

    ks = max(ours, key=lambda k: geomean(auto_speedup(k, M) for M in cublas))
    buckets = []
    for M in sorted(cublas):
        us, cfg = best(ks, M)
        bucket = {"m_max": M, "cublas_us": round(cublas[M], 3)}
        if cfg is not None and cublas[M] / us >= margin:
            bucket.update(backend="triton", block_n=cfg.block_n, block_m=cfg.block_m, num_warps=cfg.num_warps,
                          num_stages=cfg.num_stages, us=round(us, 3), speedup=round(cublas[M] / us, 3))
        else:
            bucket.update(backend="cublas", best_triton_us=round(us, 3) if cfg is not None else None)
        buckets.append(bucket)
    return ks, buckets


def measure_auto(N, K, ms, weights, copy_bw, args):
    """Public ``linear(backend="auto")`` (table installed) vs cuBLAS, graph and eager."""
    cells = []
    for M in ms:
        x = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
        y = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
        config = dispatch.auto_config(device_family(x.device), M, N, K)
        cub = graph_us(lambda w: torch.mm(x, w.t(), out=y), weights, args.warmup, args.rep)
        auto = graph_us(lambda w: linear(x, w, out=y, backend="auto"), weights, args.warmup, args.rep)
        w = weights[0]
        cub_eager = eager_us(lambda: torch.mm(x, w.t(), out=y), args.warmup, args.rep)
        auto_eager = eager_us(lambda: linear(x, w, out=y, backend="auto"), args.warmup, args.rep)
        nbytes = w.numel() * 2 + x.numel() * 2 + y.numel() * 2
        cells.append({
            "N": N, "K": K, "M": M, "weight_mib": round(w.numel() * 2 / 2**20, 2),
            "auto_backend": "triton" if config is not None else "cublas",
            "config": None if config is None else dataclasses.asdict(config),
            "cublas_graph_us": round(cub, 3), "auto_graph_us": round(auto, 3),
            "speedup_graph": round(cub / auto, 4),
            "cublas_eager_us": round(cub_eager, 3), "auto_eager_us": round(auto_eager, 3),
            "speedup_eager": round(cub_eager / auto_eager, 4),
            "floor_us": round(nbytes / copy_bw * 1e6, 3),
            "auto_pct_copy_bw": round(100 * nbytes / (auto * 1e-6) / copy_bw, 1),
            "cublas_pct_copy_bw": round(100 * nbytes / (cub * 1e-6) / copy_bw, 1),
        })
    return cells


def parse_shapes(text: str):
    return [tuple(int(v) for v in item.split("x")) for item in text.split(",")]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", required=True, help="directory for linear_<family>.json results")
    p.add_argument("--table-out", required=True, help="auto table path, e.g. kimiops/gemm/tables/sm90.json")
    p.add_argument("--shapes", type=parse_shapes, default=SHAPES, help="NxK,NxK,... (default: the issue's grid)")
    p.add_argument("--ms", type=lambda s: tuple(int(v) for v in s.split(",")), default=MS)
    p.add_argument("--margin", type=float, default=1.03, help="speedup over cuBLAS a table entry needs")
    p.add_argument("--warmup", type=int, default=5, help="do_bench warmup, ms")
    p.add_argument("--rep", type=int, default=25, help="do_bench repetition time, ms")
    args = p.parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("bench_linear.py needs a CUDA GPU")

    started = time.time()

    def log(msg: str) -> None:
        print(f"[{time.time() - started:7.1f}s] {msg}", flush=True)

    family = device_family(torch.device("cuda"))
    copy_bw = copy_bandwidth(args.warmup, args.rep * 4)
    log(f"{torch.cuda.get_device_name()} ({family}): copy bandwidth {copy_bw / 1e12:.3f} TB/s (read+write)")

    table = {"format": dispatch.TABLE_FORMAT, "family": family, "device": torch.cuda.get_device_name(),
             "date": datetime.date.today().isoformat(), "torch": torch.__version__, "triton": triton.__version__,
             "min_speedup": args.margin, "timing": "CUDA-graph replay over rotating weights (cold L2), median",
             "shapes": {}}
    for N, K in args.shapes:
        weights = rotating_weights(N, K)
        cublas, ours = sweep_shape(N, K, args.ms, weights, args, log)
        ks, buckets = choose(cublas, ours, args.margin)
        table["shapes"][dispatch.shape_key(N, K)] = {"block_k": block_k_for(K), "k_split": ks, "buckets": buckets}
        log(f"N={N} K={K} copies={len(weights)} k_split={ks}: " + ", ".join(
            f"M={b['m_max']} {b['backend']} {b.get('speedup', 1.0)}x" for b in buckets))
        del weights

    dispatch.parse_table(table, "generated table")  # the file must load
    table_out = Path(args.table_out)
    table_out.parent.mkdir(parents=True, exist_ok=True)
    table_out.write_text(json.dumps(table, indent=1) + "\n")
    log(f"wrote {table_out}")

    # Verify through the public entry with exactly this table installed.
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copy(table_out, Path(tmp) / f"{family}.json")
        dispatch.TABLE_DIR = Path(tmp)
        dispatch.table_for.cache_clear()
        cells = []
        for N, K in args.shapes:
            weights = rotating_weights(N, K)
            cells += measure_auto(N, K, args.ms, weights, copy_bw, args)
            for c in cells[-len(args.ms):]:
                log(f"N={N:5d} K={K:5d} M={c['M']:2d} {c['auto_backend']:6s} cuBLAS {c['cublas_graph_us']:8.2f} us "
                    f"auto {c['auto_graph_us']:8.2f} us ({c['speedup_graph']:.2f}x, {c['auto_pct_copy_bw']:.0f}% bw) "
                    f"eager {c['cublas_eager_us']:.1f}/{c['auto_eager_us']:.1f} us")
            del weights

    speedups = [c["speedup_graph"] for c in cells]
    worst = min(cells, key=lambda c: c["speedup_graph"])
    big = [c for c in cells if c["weight_mib"] * 2**20 >= BW_WEIGHT_BYTES]
    summary = {
        "geomean_speedup_graph": round(geomean(speedups), 4),
        "geomean_speedup_eager": round(geomean(c["speedup_eager"] for c in cells), 4),
        "min_speedup_graph": worst["speedup_graph"],
        "min_cell": {k: worst[k] for k in ("N", "K", "M")},
        "min_pct_copy_bw_weights_ge_24MiB": min((c["auto_pct_copy_bw"] for c in big), default=None),
        "acceptance": {
            "geomean_ge_1.5": geomean(speedups) >= 1.5,
            "no_cell_below_0.97": worst["speedup_graph"] >= 0.97,
            "weights_ge_24MiB_at_80pct_bw": all(c["auto_pct_copy_bw"] >= 80 for c in big),
        },
    }
    results = {
        "benchmark": "bench_linear", "device": torch.cuda.get_device_name(),
        "capability": list(torch.cuda.get_device_capability()), "family": family,
        "torch": torch.__version__, "triton": triton.__version__, "cuda": torch.version.cuda,
        "date": datetime.datetime.now().isoformat(timespec="seconds"),
        "copy_bw_tb_s": round(copy_bw / 1e12, 4),
        "settings": {"dtype": "bfloat16", "bias": False, "ms": list(args.ms), "margin": args.margin,
                     "warmup_ms": args.warmup, "rep_ms": args.rep, "cold_bytes": COLD_BYTES,
                     "split_targets": list(SPLIT_TARGETS), "tile_candidates": [list(t) for t in TILE_CANDIDATES]},
        "summary": summary, "table": str(table_out), "cells": cells, "sweep": table["shapes"],
        "wall_s": round(time.time() - started, 1),
    }
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    out_path = out_dir / f"linear_{family}.json"
    out_path.write_text(json.dumps(results, indent=1) + "\n")
    log(f"geomean {summary['geomean_speedup_graph']:.3f}x (eager {summary['geomean_speedup_eager']:.3f}x), "
        f"min {worst['speedup_graph']:.3f}x at {summary['min_cell']}, "
        f"min bw (>=24 MiB) {summary['min_pct_copy_bw_weights_ge_24MiB']}% -> {out_path}")


if __name__ == "__main__":
    main()
