#!/usr/bin/env python3
"""How fast can a kernel that only *reads* a weight go, timed the way `bench_linear.py` times
`kimiops.linear` and cuBLAS (CUDA-graph replay, one call per rotating weight copy, cold L2)?

The issue's 1.5x geomean over cuBLAS is a statement about bandwidth and per-call fixed cost: a
linear at decode M cannot beat the time it takes to stream its weight once. This tool measures
that ceiling on the machine, next to cuBLAS and `linear(backend="auto")` in the same process:

- ``flat``: a persistent-style streaming kernel, ``P`` programs each summing one contiguous range
  of the weight's bytes (plain vector loads, software pipelined ``stages`` deep), no matrix math;
- ``tma``: the same ranges read as ``[BR, 64]`` tiles through TMA descriptors;
- each with programmatic dependent launch off, on with the loads after the wait (``pdl``), and on
  with the loads issued before the wait (``early``: only legal for bytes no earlier kernel in
  flight writes, as model weights in a decode step; it bounds what overlapping a call's ramp-up
  with the previous call's tail could give).

Phase 1 sweeps the variants on two shapes; phase 2 times the best few on every shape of the
issue. It prints, per shape, the best read time, its TB/s, the intercept and slope of time
against bytes, and the geomean over the issue's 55 cells of cuBLAS's time over the best read
time: the speedup a linear would get if it ran at that read floor.

    PYTHONPATH=$PWD python3 benchmarks/tools/linear_read_floor.py [--json OUT.json]
"""
from __future__ import annotations

import argparse
import itertools
import json
import math
import sys
from pathlib import Path

import torch
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import bench_linear as bl  # noqa: E402

from kimiops.bench.timing import copy_bandwidth, environment  # noqa: E402
from kimiops.gemm.linear import linear  # noqa: E402
from kimiops.gemm.skinny import prefetch_l2  # noqa: E402
from kimiops.intmath import cdiv  # noqa: E402

TMA_COLS = 64
MODES = ("off", "pdl", "pf", "early")  # TMA view of the weight: rows of 64 bf16 (128 bytes)


@triton.jit
def _read_flat_kernel(w_ptr, out_ptr, numel, per_prog, BLOCK: tl.constexpr, NUM_STAGES: tl.constexpr,
                      PDL: tl.constexpr, EARLY: tl.constexpr, L2_PREFETCH: tl.constexpr):
    """out[pid] = sum of w[pid * per_prog : (pid + 1) * per_prog] (fp32), read BLOCK elements at a time."""
    pid = tl.program_id(0)
    lo = pid.to(tl.int64) * per_prog
    hi = tl.minimum(lo + per_prog, numel)
    if PDL:
        tl.extra.cuda.gdc_launch_dependents()
        if L2_PREFETCH:  # ask L2 for the whole range (one 128-byte line per 64 elements), then wait
            lines = tl.arange(0, 1024) * 64
            for s in range(lo, hi, 1024 * 64):
                prefetch_l2(w_ptr + tl.minimum(s + lines, hi - 1))
        if not EARLY:
            tl.extra.cuda.gdc_wait()
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], tl.float32)
    for s in tl.range(lo, hi, BLOCK, num_stages=NUM_STAGES):
        x = tl.load(w_ptr + s + offs, mask=s + offs < hi, other=0.0, eviction_policy="evict_first")
        acc += x.to(tl.float32)
    if PDL and EARLY:
        tl.extra.cuda.gdc_wait()  # before the only write
    tl.store(out_ptr + pid, tl.sum(acc, axis=0))


@triton.jit
def _read_tma_kernel(desc, out_ptr, n_rows, rows_per_prog, BR: tl.constexpr, BC: tl.constexpr,
                     NUM_STAGES: tl.constexpr, PDL: tl.constexpr, EARLY: tl.constexpr):
    """out[pid] = sum of rows [pid * rows_per_prog, ...) of the [n_rows, BC] view, BR rows per TMA load."""
    pid = tl.program_id(0)
    if PDL:
        tl.extra.cuda.gdc_launch_dependents()
        if not EARLY:
            tl.extra.cuda.gdc_wait()
    lo = pid * rows_per_prog
    hi = tl.minimum(lo + rows_per_prog, n_rows)
    acc = tl.zeros([BR, BC], tl.float32)
    for r in tl.range(lo, hi, BR, num_stages=NUM_STAGES):
        acc += desc.load([r, 0]).to(tl.float32)  # rows past n_rows read as zeros (TMA bounds)
    if PDL and EARLY:
        tl.extra.cuda.gdc_wait()
    tl.store(out_ptr + pid, tl.sum(tl.sum(acc, axis=1), axis=0))


def flat_call(P, block, stages, warps, mode, out):
    pdl, early, pf = mode != "off", mode == "early", mode == "pf"

    def call(w):
        numel = w.numel()
        per = cdiv(cdiv(numel, P), block) * block
        _read_flat_kernel[(P,)](w, out, numel, per, BLOCK=block, NUM_STAGES=stages, PDL=pdl, EARLY=early, L2_PREFETCH=pf,
                                num_warps=warps, num_stages=stages, **({"launch_pdl": True} if pdl else {}))
    return call


def tma_call(P, br, stages, warps, mode, out):
    pdl, early = mode != "off", mode == "early"
    descs = {}

    def call(w):
        key = w.data_ptr()
        if key not in descs:
            descs[key] = TensorDescriptor.from_tensor(w.view(-1, TMA_COLS), [br, TMA_COLS])
        n_rows = w.numel() // TMA_COLS
        per = cdiv(cdiv(n_rows, P), br) * br
        _read_tma_kernel[(P,)](descs[key], out, n_rows, per, BR=br, BC=TMA_COLS, NUM_STAGES=stages, PDL=pdl,
                               EARLY=early, num_warps=warps, num_stages=stages,
                               **({"launch_pdl": True} if pdl else {}))
    return call


def variants(sms):
    """name -> factory(out) of every read variant swept in phase 1."""
    out = {}
    for mult, block, stages, warps, mode in itertools.product((1, 2, 4), (4096, 8192), (1, 3), (4, 8),
                                                               MODES):
        P = mult * sms
        out[f"flat P{P} b{block} s{stages} w{warps} {mode}"] = (
            lambda o, P=P, b=block, s=stages, w=warps, m=mode: flat_call(P, b, s, w, m, o))
    for mult, br, stages, warps, mode in itertools.product((1, 2), (128, 256), (3, 4), (4,), ("off", "pdl", "early")):  # no "pf"
        P = mult * sms
        if br * TMA_COLS * 2 * stages > 200 * 1024:
            continue
        out[f"tma P{P} r{br} s{stages} w{warps} {mode}"] = (
            lambda o, P=P, b=br, s=stages, w=warps, m=mode: tma_call(P, b, s, w, m, o))
    return out


def check(call, w, out, P):
    out.zero_()
    call(w)
    torch.cuda.synchronize()
    got = out[:P].double().sum().item()
    ref = w.double().sum().item()
    if not math.isclose(got, ref, rel_tol=1e-3, abs_tol=1e-2 * math.sqrt(w.numel()) * 1e-3):
        raise AssertionError(f"read kernel sum {got} != {ref}")


def _gm(vals) -> float:
    vals = list(vals)
    return math.exp(sum(map(math.log, vals)) / len(vals))


# modes whose loads honour the dependency on the previous kernel (what a linear must do with x)
WAITING_MODES = ("off", "pdl", "pf")


def summarize(rows, copy_bw_tb_s: float) -> dict:
    """Print and return, from phase 2's rows: per mode the fit time = intercept + bytes / slope
    (least squares over the shapes) and the geomean over the cells of cuBLAS's time over that read
    time; the same for the best waiting mode per shape (what bounds a linear in a chain of
    dependent calls); per shape the shipped kernel at M = 1 over the best waiting read, and the
    read floors' share of copy bandwidth (weight bytes over time)."""
    xs = [r["N"] * r["K"] * 2 for r in rows]
    cells = [(r, M) for r in rows for M in r["cublas_us"]]
    summary = {"copy_bw_tb_s": copy_bw_tb_s,
               "geomean_cublas_over_auto": _gm(r["cublas_us"][M] / r["auto_us"][M] for r, M in cells)}
    for mode in MODES:
        ys = [r["best_read"][mode][1] for r in rows]
        n = len(xs)
        mx, my = sum(xs) / n, sum(ys) / n
        b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
        a = my - b * mx
        ceiling = _gm(r["cublas_us"][M] / r["best_read"][mode][1] for r, M in cells)
        summary[mode] = {"fit_intercept_us": a, "fit_slope_tb_s": 1e-6 / b, "geomean_cublas_over_read_floor": ceiling}
        print(f"read floor, mode {mode:<5}: {a:.2f} us + bytes / {1e-6 / b:.3f} TB/s; geomean over "
              f"{len(cells)} cells of cuBLAS / read floor {ceiling:.3f}x")

    def waiting(r):
        return min(r["best_read"][m][1] for m in WAITING_MODES)

    summary["waiting_best"] = _gm(r["cublas_us"][M] / waiting(r) for r, M in cells)
    print(f"best waiting mode per shape ({', '.join(WAITING_MODES)}): geomean cuBLAS / read floor "
          f"{summary['waiting_best']:.3f}x")
    print(f"geomean of cuBLAS / auto over the same cells: {summary['geomean_cublas_over_auto']:.3f}x")
    print("per shape: auto at M = 1 over the best waiting read; read floors in % of copy bandwidth")
    for r, x in zip(rows, xs):
        m1 = r["auto_us"].get(1, r["auto_us"].get("1"))
        pct = "  ".join(f"{m} {100 * x / (r['best_read'][m][1] * 1e-6) / (copy_bw_tb_s * 1e12):5.1f}%" for m in MODES)
        print(f"  {r['N']:>5}x{r['K']:<6} auto {m1:6.2f} us / {waiting(r):6.2f} us = {m1 / waiting(r):.3f}   {pct}")
    return summary


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--json", type=Path, default=None)
    p.add_argument("--summarize", type=Path, default=None, metavar="JSON",
                   help="only print the summary of an earlier run's --json file (no GPU needed)")
    p.add_argument("--sweep-shapes", default="6144x2048,6144x6144")
    p.add_argument("--keep", type=int, default=2, help="variants per mode carried from phase 1 to phase 2")
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--rep", type=int, default=12)
    args = p.parse_args()
    if args.summarize:
        data = json.loads(args.summarize.read_text())
        summarize(data["rows"], data["summary"]["copy_bw_tb_s"])
        return
    torch.manual_seed(0)
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    bw = copy_bandwidth()
    env = environment()
    print(f"{env}\ncopy bandwidth {bw / 1e12:.3f} TB/s (read + write)", flush=True)
    out = torch.zeros(8 * sms, device="cuda", dtype=torch.float32)
    facts = variants(sms)

    def t(call, weights):
        return bl.graph_us(call, weights, args.warmup, args.rep)

    # phase 1: every variant on the sweep shapes
    phase1 = {}
    for N, K in bl.parse_shapes(args.sweep_shapes):
        weights = bl.rotating_weights(N, K)
        nbytes = N * K * 2
        for name, make in facts.items():
            call = make(out)
            P = int(name.split()[1][1:])
            try:
                check(call, weights[0], out, P)
                us = t(call, weights)
            except Exception as exc:  # a variant that does not compile or run is reported, not fatal
                print(f"  {N}x{K} {name}: FAILED {type(exc).__name__}: {str(exc)[:200]}", flush=True)
                continue
            phase1.setdefault(name, {})[f"{N}x{K}"] = us
            print(f"  {N}x{K} {name:<34} {us:8.2f} us  {nbytes / us / 1e6:6.3f} TB/s", flush=True)
        del weights
    shapes1 = [s for s in args.sweep_shapes.split(",")]
    ranked = sorted((n for n in phase1 if all(s in phase1[n] for s in shapes1)),
                    key=lambda n: math.prod(phase1[n][s] for s in shapes1))
    keep = [n for mode in MODES for n in [r for r in ranked if r.endswith(" " + mode)][: args.keep]]
    print("phase 1 best per mode (product over the sweep shapes):", *keep, sep="\n  ", flush=True)

    # phase 2: the kept variants, cuBLAS and auto on every shape and M of the issue
    rows = []
    for N, K in bl.SHAPES:
        weights = bl.rotating_weights(N, K)
        nbytes = N * K * 2
        reads = {}
        for name in keep:
            call = facts[name](out)
            check(call, weights[0], out, int(name.split()[1][1:]))
            reads[name] = t(call, weights)
        best = {mode: min((n for n in reads if n.endswith(" " + mode)), key=reads.get) for mode in MODES}
        row = {"N": N, "K": K, "weight_mib": nbytes / 2**20, "read_us": reads,
               "best_read": {mode: [n, reads[n]] for mode, n in best.items()}, "cublas_us": {}, "auto_us": {}}
        for M in bl.MS:
            x = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
            y = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
            row["cublas_us"][M] = t(lambda w: torch.mm(x, w.t(), out=y), weights)
            row["auto_us"][M] = t(lambda w: linear(x, w, out=y, backend="auto"), weights)
        rows.append(row)
        reads_s = "  ".join(f"{mode} {reads[n]:6.2f}" for mode, n in best.items())
        print(f"{N:>5}x{K:<6} {nbytes / 2**20:6.1f} MiB  read floor (us) by mode: {reads_s}  | cuBLAS M=1/32 "
              f"{row['cublas_us'][1]:6.2f} / {row['cublas_us'][32]:6.2f}  auto {row['auto_us'][1]:6.2f} / "
              f"{row['auto_us'][32]:6.2f}", flush=True)
        del weights

    summary = summarize(rows, bw / 1e12)
    if args.json:
        args.json.write_text(json.dumps({"env": env, "summary": summary, "phase1": phase1, "kept": keep,
                                         "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
