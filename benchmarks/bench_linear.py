#!/usr/bin/env python3
"""kimiops.linear vs cuBLAS at decode-sized M; sweeps kernel configs and writes the auto table.

Run on the GPU, from the repository root::

    PYTHONPATH=$PWD python3 benchmarks/bench_linear.py --out benchmarks/results \\
        --table-out kimiops/gemm/tables/sm90.json

What it does, in one process:

1. Copy bandwidth: median of a 1 GiB device-to-device copy, counting read + write.
2. Sweep, per (N, K) and M: cuBLAS (``torch.mm``, the GEMM ``torch.addmm`` runs without bias)
   and the Triton kernel over the shape-level choices (``block_k`` in ``BLOCK_K_CANDIDATES``
   times ``block_n`` in ``BLOCK_N_CANDIDATES`` times the wave-balanced K splits of
   ``split_candidates``) and the per-M ``TILE_CANDIDATES`` of :mod:`kimiops.gemm.skinny`. Each is timed as CUDA-graph replay of one call per weight copy
   over enough rotating copies (>= 3x the 60 MB L2) that every call streams its weight from HBM;
   ``triton.testing.do_bench(return_mode="median")`` times the replay (it also flushes L2
   before each replay); time per call = replay time / copies. Every candidate's output is
   checked against cuBLAS before its time counts.
3. Table: per (N, K) the (block_n, K split) that maximizes the geometric mean over M of the
   speedup auto would get (shared by all M so that rows are batch invariant); per M the
   fastest tile, kept only where it beats cuBLAS by ``--margin``. Every candidate's best time
   per M is recorded under ``candidates`` in the results JSON. Written to ``--table-out``.
   ``--triton-from TABLE`` skips the Triton sweep and re-times that table's Triton choices.
3b. Gluon (sm90, unless ``--no-gluon``): per (N, K) and M, every config of
   ``skinny_gluon.sweep_configs`` (rings of ``RING_CANDIDATES`` x K splits x the global or the
   cluster split-K hand-off); the fastest replaces the bucket's choice where it beats it by
   ``--gluon-margin`` and cuBLAS by ``--margin``.
4. Verification: the public ``kimiops.gemm.linear.linear(backend="auto")`` with that table,
   timed the same way (graph, cold L2) and eagerly (do_bench, L2 flushed), against cuBLAS.
   Speedups, % of copy bandwidth (bytes = weight + x + y) and the acceptance summary are
   written to ``--out``/linear_<family>.json. ``--verify TABLE`` (instead of ``--table-out``)
   runs this step alone on a given table, e.g. to compare two tables on one machine.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import functools
import itertools
import json
import math
import shutil
import tempfile
import time
from pathlib import Path

import torch
import triton
from triton.testing import do_bench

from kimiops.arch import GLUON_LINEAR_FAMILIES, device_family
from kimiops.bench.timing import copy_bandwidth
from kimiops.gemm import dispatch
from kimiops.gemm.linear import linear
from kimiops.testing import rel_err
from kimiops.gemm.skinny import (BLOCK_K_CANDIDATES, BLOCK_N_CANDIDATES, PDL_CANDIDATES, TILE_CANDIDATES, SkinnyConfig, block_k_for,
                                  block_m_for, fit_stages, skinny_linear, split_candidates)
from kimiops.gemm import skinny_gluon
from kimiops.gemm.skinny_gluon import RING_CANDIDATES, GluonConfig, gluon_linear

SHAPES = [(1024, 2048), (1024, 6144), (2624, 2048), (2624, 6144), (6144, 2048), (6144, 6144),
          (2048, 4096), (7168, 2048), (2048, 7168), (4096, 7168), (7168, 18432)]
MS = (1, 4, 8, 16, 32)
L2_BYTES = 60 * 2**20
COLD_BYTES = 3 * L2_BYTES
MAX_COPIES = 64
BW_WEIGHT_BYTES = 24 * 2**20  # acceptance: weights >= 24 MB at >= 80% of copy bandwidth


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


def geomean(values) -> float:
    values = list(values)
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def _compile_job(job) -> str | None:
    """Worker: compile (by running once) one kernel variant so the parent finds it in Triton's
    disk cache. Same N, K, k_split and dtypes as the real call, so the same specialization."""
    N, K, M, cfg, bias, out_dtype = job
    try:
        x = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(N, K, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(N, device="cuda", dtype=torch.bfloat16) if bias else None
        y = torch.empty(M, N, device="cuda", dtype=getattr(torch, out_dtype))
        skinny_linear(x, w, b, y, SkinnyConfig(**cfg))
        torch.cuda.synchronize()
        return None
    except Exception as exc:  # noqa: BLE001 - reported, the sweep marks the config invalid
        return f"{cfg}: {type(exc).__name__}"


def precompile(jobs, workers: int, log) -> None:
    """Compiles kernel variants in parallel processes (Triton compiles are single-threaded)."""
    import concurrent.futures
    import multiprocessing

    def key(job):  # the constexprs that make a distinct compiled kernel
        N, K, M, cfg, bias, out = job
        splits = triton.cdiv(K, cfg["k_split"])
        return (tuple(sorted(cfg.items() - {("k_split", cfg["k_split"])})), splits > 1,
                min(8, triton.next_power_of_2(splits)), N % cfg["block_n"] == 0, K % cfg["block_k"] == 0, bias, out)

    jobs = list({key(j): j for j in jobs}.values())
    started = time.time()
    ctx = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(workers, mp_context=ctx) as pool:
        failed = [r for r in pool.map(_compile_job, jobs) if r]
    log(f"precompiled {len(jobs)} variants in {time.time() - started:.1f}s ({len(failed)} failed)")


def sweep_jobs(shapes, ms, block_ns=BLOCK_N_CANDIDATES, block_ks=BLOCK_K_CANDIDATES, tiles=TILE_CANDIDATES,
               split_limit=2):
    jobs = []
    for N, K in shapes:
        for bn, ks, block_k in shape_candidates(N, K, block_ns, block_ks, split_limit):
            for M in ms:
                bm = block_m_for(M)
                for (num_warps, num_stages), pdl in itertools.product(tiles, PDL_CANDIDATES):
                    cfg = dict(block_n=bn, block_m=bm, block_k=block_k, k_split=ks, num_warps=num_warps,
                               num_stages=fit_stages(bn, bm, block_k, num_stages), pdl=pdl)
                    jobs.append((N, K, M, tuple(sorted(cfg.items())), False, "bfloat16"))
    return [(N, K, M, dict(cfg), b, o) for N, K, M, cfg, b, o in dict.fromkeys(jobs)]


def test_jobs(shapes, family):
    """The variants the GPU tests compile (auto and forced triton, bias on/off, bf16/fp32 out)."""
    jobs = []
    for N, K in shapes:
        for M in (1, 4, 8, 16, 32, 64):
            cfgs = {dispatch.triton_config(family, M, N, K), dispatch.auto_config(family, M, N, K)}
            for cfg in (c for c in cfgs if isinstance(c, SkinnyConfig)):  # Gluon compiles in-process
                for bias in (False, True):
                    for out in ("bfloat16", "float32"):
                        jobs.append((N, K, M, tuple(sorted(dataclasses.asdict(cfg).items())), bias, out))
    return [(N, K, M, dict(cfg), b, o) for N, K, M, cfg, b, o in dict.fromkeys(jobs)]


def shape_candidates(N: int, K: int, block_ns=BLOCK_N_CANDIDATES,
                     block_ks=BLOCK_K_CANDIDATES, split_limit: int = 2) -> list[tuple[int, int, int]]:
    """Shape-level choices (block_n, k_split, block_k): they fix the K order, so all M share one.
    K tiles wider than K are not tried (below K = 128: ``block_k_for(K)`` only)."""
    widths = sorted({bk for bk in block_ks if bk <= K} if K >= 128 else set()) or [block_k_for(K)]
    return [(bn, ks, bk) for bk in widths for bn in block_ns for ks in split_candidates(N, K, bn, bk, limit=split_limit)]


def try_config(x, w, y, cfg):
    """Runs ``cfg`` once; returns None if it does not launch (e.g. out of shared memory)."""
    try:
        skinny_linear(x, w, None, y, cfg)
        torch.cuda.synchronize()
        return True
    except Exception as exc:  # noqa: BLE001 - triton OutOfResources and compile failures
        return exc


def sweep_shape(N, K, ms, weights, args, log):
    """Times cuBLAS and every candidate for each M.

    Returns (cublas_us, {(block_n, k_split, block_k): {M: [(cfg, us)]}})."""
    fixed = triton_from(args.triton_from, N, K) if args.triton_from else None
    cands = [fixed[0]] if fixed else shape_candidates(N, K, args.block_n, args.block_k, args.split_limit)
    cublas, ours = {}, {c: {} for c in cands}
    for M in ms:
        x = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
        y = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
        cublas[M] = graph_us(lambda w: torch.mm(x, w.t(), out=y), weights, args.warmup, args.rep)
        expect = torch.mm(x, weights[0].t())
        for bn, ks, block_k in cands:
            ours[(bn, ks, block_k)][M] = []
            seen = set()
            if fixed:
                tiles = [fixed[1].get(M)] if fixed[1].get(M) is not None else []
            else:
                bm = block_m_for(M)
                tiles = [SkinnyConfig(block_n=bn, block_m=bm, block_k=block_k, k_split=ks, num_warps=num_warps,
                                      num_stages=fit_stages(bn, bm, block_k, num_stages), pdl=pdl)
                         for (num_warps, num_stages), pdl in itertools.product(args.tiles, PDL_CANDIDATES)]
            for cfg in tiles:
                if cfg in seen:
                    continue
                seen.add(cfg)
                ok = try_config(x, weights[0], y, cfg)
                err = rel_err(y, expect) if ok is True else float("nan")
                if not err <= 1e-2:
                    log(f"  INVALID {cfg} at M={M}: {ok if ok is not True else f'rel err vs cuBLAS {err:.3g}'}")
                    ours[(bn, ks, block_k)][M].append((cfg, None))
                    continue
                try:
                    us = graph_us(lambda w: skinny_linear(x, w, None, y, cfg), weights, args.warmup, args.rep)
                except Exception as exc:  # noqa: BLE001 - e.g. a launch attribute capture rejects
                    log(f"  INVALID {cfg} at M={M} under graph capture: {type(exc).__name__}: {exc}")
                    torch.cuda.synchronize()
                    us = None
                ours[(bn, ks, block_k)][M].append((cfg, us))
    return cublas, ours


def triton_from(path, N, K):
    """The Triton choices of a committed table for (N, K): ``((block_n, k_split, block_k), {M:
    SkinnyConfig})`` with the buckets' M as keys (cuBLAS buckets left out)."""
    entry = dispatch.parse_table(json.loads(Path(path).read_text()), str(path)).get(dispatch.shape_key(N, K))
    if entry is None:
        raise SystemExit(f"--triton-from {path}: no entry for {N}x{K}")
    return ((entry.block_n, entry.k_split, entry.block_k),
            {b.m_max: b.config for b in entry.buckets if isinstance(b.config, SkinnyConfig)})


def gluon_sweep(N, K, M, weights, args, log):
    """Best (us, GluonConfig) over ``skinny_gluon.sweep_configs`` (rings x K splits x split-K
    hand-offs), each checked against cuBLAS before it is timed; ``(inf, None)`` when none runs."""
    x = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
    y = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
    expect = torch.mm(x, weights[0].t())
    best = (math.inf, None)
    for cfg in skinny_gluon.sweep_configs(N, K):
        try:
            gluon_linear(x, weights[0], None, y, cfg)
            torch.cuda.synchronize()
            err = rel_err(y, expect)
            if not err <= 1e-2:
                log(f"  INVALID {cfg} at M={M}: rel err vs cuBLAS {err:.3g}")
                continue
            us = graph_us(lambda w: gluon_linear(x, w, None, y, cfg), weights, args.warmup, args.rep)
        except Exception as exc:  # noqa: BLE001 - e.g. out of shared memory, a cluster that cannot be placed
            log(f"  INVALID {cfg} at M={M}: {type(exc).__name__}: {str(exc)[:200]}")
            torch.cuda.synchronize()
            continue
        best = min(best, (us, cfg), key=lambda t: t[0])
    return best


def add_gluon(buckets, N, K, weights, args, log, record):
    """Turns a bucket to the Gluon kernel where its best ring beats the bucket's choice by
    ``--gluon-margin`` and cuBLAS by ``--margin``; every M's best Gluon time goes to ``record``."""
    for bucket in buckets:
        M = bucket["m_max"]
        if M > skinny_gluon.MAX_M:
            continue
        us, cfg = gluon_sweep(N, K, M, weights, args, log)
        record[str(M)] = None if cfg is None else {"us": round(us, 3), **dataclasses.asdict(cfg)}
        current = bucket.get("us", bucket["cublas_us"])
        if cfg is not None and current / us >= args.gluon_margin and bucket["cublas_us"] / us >= args.margin:
            previous = {k: bucket.pop(k) for k in ("backend", "block_m", "num_warps", "num_stages", "pdl", "us",
                                                   "speedup", "best_triton_us") if k in bucket}
            bucket.update(backend="gluon", block_k=cfg.block_k, k_split=cfg.k_split, num_stages=cfg.num_stages,
                          pdl=cfg.pdl, cluster=cfg.cluster, us=round(us, 3), speedup=round(bucket["cublas_us"] / us, 3),
                          replaced={k: v for k, v in previous.items() if k in ("backend", "us", "best_triton_us")})


def choose(cublas, ours, margin):
    """Shape-level (block_n, k_split, block_k) maximizing the geomean of auto's speedup over M; per M the
    best tile or cuBLAS. Also returns the per-candidate summary (best us per M) for the record."""
    def best(c, M):
        timed = [(us, cfg) for cfg, us in ours[c][M] if us is not None]
        return min(timed, key=lambda t: t[0]) if timed else (math.inf, None)

    def auto_speedup(c, M):
        s = cublas[M] / best(c, M)[0]
        return s if s >= margin else 1.0

    chosen = max(ours, key=lambda c: geomean(auto_speedup(c, M) for M in cublas))
    buckets = []
    for M in sorted(cublas):
        us, cfg = best(chosen, M)
        bucket = {"m_max": M, "cublas_us": round(cublas[M], 3)}
        if cfg is not None and cublas[M] / us >= margin:
            bucket.update(backend="triton", block_m=cfg.block_m, num_warps=cfg.num_warps,
                          num_stages=cfg.num_stages, pdl=cfg.pdl, us=round(us, 3), speedup=round(cublas[M] / us, 3))
        else:
            bucket.update(backend="cublas", best_triton_us=round(us, 3) if cfg is not None else None)
        buckets.append(bucket)
    record = [{"block_n": c[0], "k_split": c[1], "block_k": c[2],
               "best_us": {str(M): (round(best(c, M)[0], 3) if best(c, M)[1] else None) for M in sorted(cublas)},
               "auto_geomean": round(geomean(auto_speedup(c, M) for M in cublas), 4)} for c in ours]
    return chosen, buckets, record


def cell_baselines(N, K, M, weights, warmup: int, rep: int):
    """A cell's random bf16 ``x [M, K]``, its output buffer ``y [M, N]``, and the CUDA-graph medians (us)
    over ``weights`` of cuBLAS and of ``linear(backend="auto")`` writing into ``y``."""
    x = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
    y = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
    cub = graph_us(lambda w: torch.mm(x, w.t(), out=y), weights, warmup, rep)
    auto = graph_us(lambda w: linear(x, w, out=y, backend="auto"), weights, warmup, rep)
    return x, y, cub, auto


def measure_auto(N, K, ms, weights, copy_bw, args):
    """Public ``linear(backend="auto")`` (table installed) vs cuBLAS, graph and eager."""
    cells = []
    for M in ms:
        x, y, cub, auto = cell_baselines(N, K, M, weights, args.warmup, args.rep)
        config = dispatch.auto_config(device_family(x.device), M, N, K)
        w = weights[0]
        cub_eager = eager_us(lambda: torch.mm(x, w.t(), out=y), args.warmup, args.rep)
        auto_eager = eager_us(lambda: linear(x, w, out=y, backend="auto"), args.warmup, args.rep)
        nbytes = w.numel() * 2 + x.numel() * 2 + y.numel() * 2
        cells.append({
            "N": N, "K": K, "M": M, "weight_mib": round(w.numel() * 2 / 2**20, 2),
            "auto_backend": ("cublas" if config is None else "gluon" if isinstance(config, GluonConfig) else "triton"),
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
    p.add_argument("--table-out", help="auto table path, e.g. kimiops/gemm/tables/sm90.json")
    p.add_argument("--verify", default=None, metavar="TABLE",
                   help="no sweep: time this table through kimiops.linear(backend='auto') beside cuBLAS (step 4)")
    p.add_argument("--shapes", type=parse_shapes, default=SHAPES, help="NxK,NxK,... (default: the issue's grid)")
    p.add_argument("--ms", type=lambda s: tuple(int(v) for v in s.split(",")), default=MS)
    p.add_argument("--block-n", type=lambda s: tuple(int(v) for v in s.split(",")), default=BLOCK_N_CANDIDATES,
                   help="weight-tile heights to sweep (default: BLOCK_N_CANDIDATES of kimiops.gemm.skinny)")
    p.add_argument("--block-k", type=lambda s: tuple(int(v) for v in s.split(",")), default=BLOCK_K_CANDIDATES,
                   help="K-tile widths to sweep (default: BLOCK_K_CANDIDATES of kimiops.gemm.skinny)")
    p.add_argument("--tiles", type=lambda s: tuple(tuple(int(v) for v in t.split("x")) for t in s.split(",")),
                   default=TILE_CANDIDATES, help="per-M (num_warps)x(num_stages) tiles, e.g. 4x6,8x4 "
                   "(default: TILE_CANDIDATES of kimiops.gemm.skinny)")
    p.add_argument("--split-limit", type=int, default=2, help="K splits per (block_n, block_k) (split_candidates)")
    p.add_argument("--margin", type=float, default=1.03, help="speedup over cuBLAS a table entry needs")
    p.add_argument("--triton-from", default=None, help="re-time this table's Triton choices instead of sweeping")
    p.add_argument("--no-gluon", dest="gluon", action="store_false", help="skip the Gluon kernel's sweep")
    p.add_argument("--gluon-margin", type=float, default=1.02,
                   help="speedup over the bucket's Triton kernel (or cuBLAS) the Gluon kernel needs")
    p.add_argument("--workers", type=int, default=12, help="processes that precompile kernel variants")
    p.add_argument("--warm-tests", action="store_true",
                   help="after writing the table, precompile the variants tests/gemm's GPU tests use")
    p.add_argument("--warmup", type=int, default=3, help="do_bench warmup, ms")
    p.add_argument("--rep", type=int, default=12, help="do_bench repetition time, ms")
    args = p.parse_args()
    if (args.table_out is None) == (args.verify is None):
        p.error("give exactly one of --table-out (sweep and write a table) and --verify TABLE")
    if not torch.cuda.is_available():
        raise SystemExit("bench_linear.py needs a CUDA GPU")

    started = time.time()

    def log(msg: str) -> None:
        print(f"[{time.time() - started:7.1f}s] {msg}", flush=True)

    family = device_family(torch.device("cuda"))
    copy_bw = copy_bandwidth()
    log(f"{torch.cuda.get_device_name()} ({family}): copy bandwidth {copy_bw / 1e12:.3f} TB/s (read+write)")

    table = {"format": dispatch.TABLE_FORMAT, "family": family, "device": torch.cuda.get_device_name(),
             "date": datetime.date.today().isoformat(), "torch": torch.__version__, "triton": triton.__version__,
             "min_speedup": args.margin, "timing": "CUDA-graph replay over rotating weights (cold L2), median",
             "shapes": {}}
    sweep_record = {}
    gluon = args.gluon and family in GLUON_LINEAR_FAMILIES and skinny_gluon.available()
    gluon_record = {}
    if args.verify:
        table_out = Path(args.verify)
        table = json.loads(table_out.read_text())
        dispatch.parse_table(table, str(table_out))
        log(f"verifying {table_out} (no sweep)")
    else:
        if args.workers > 0:
            jobs = ([(N, K, M, dataclasses.asdict(cfg), False, "bfloat16") for N, K in args.shapes
                     for M, cfg in triton_from(args.triton_from, N, K)[1].items()] if args.triton_from else
                    sweep_jobs(args.shapes, args.ms, args.block_n, args.block_k, args.tiles, args.split_limit))
            precompile(jobs, args.workers, log)
        for N, K in args.shapes:
            weights = rotating_weights(N, K)
            cublas, ours = sweep_shape(N, K, args.ms, weights, args, log)
            (bn, ks, bk), buckets, record = choose(cublas, ours, args.margin)
            if gluon:
                add_gluon(buckets, N, K, weights, args, log, gluon_record.setdefault(dispatch.shape_key(N, K), {}))
            table["shapes"][dispatch.shape_key(N, K)] = {"block_k": bk, "k_split": ks, "block_n": bn,
                                                         "buckets": buckets}
            sweep_record[dispatch.shape_key(N, K)] = record
            log(f"N={N} K={K} copies={len(weights)} block_n={bn} k_split={ks} block_k={bk}: " + ", ".join(
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
        if args.warm_tests and args.workers > 0:
            precompile(test_jobs(args.shapes, family), args.workers, log)
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
                     "block_n_candidates": list(args.block_n), "block_k_candidates": list(args.block_k),
                     "tile_candidates": [list(t) for t in args.tiles], "split_limit": args.split_limit,
                     "pdl_candidates": list(PDL_CANDIDATES), "triton_from": args.triton_from, "gluon_margin": args.gluon_margin,
                     "gluon_rings": [list(r) for r in RING_CANDIDATES] if gluon else None,
                     "gluon_max_cluster": skinny_gluon.MAX_CLUSTER if gluon else None},
        "summary": summary, "table": str(table_out), "cells": cells, "sweep": table["shapes"],
        "candidates": sweep_record, "gluon_best": gluon_record,
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
