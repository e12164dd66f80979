"""How close to copy bandwidth can the decode state traffic get, by CTA structure? In-place scale of
N*HV 64 KiB fp32 states (N = 64, HV = 32: 128 MiB read + 128 MiB written), graph of 20 chained calls
with PDL, like bench_kda_decode.py. Structures: one tile of ROWS x 128 fp32 per CTA (the decode
kernel's), and a persistent grid whose CTAs walk tiles with the next tile's load issued before the
current tile is stored (register double buffering).

``--index`` times instead what reading the pool index costs the decode kernel's structure (one 8 x 128
tile per one-warp CTA, program order iv, hv, n), at each of ``--ns``: the same in-place scale with the
slot taken from the program id, from the index (through L1 or past it), from a copy of the index with one
128-byte line per head (so no line is read by all of a sequence's CTAs), from the index after
``cu_seqlens`` as the kernel reads them, with the tile read past L1 (with and without the index), with L2
prefetches between the PDL release and the wait, with where the slots lie apart from the load (slots
scattered by arithmetic; the index holding 0..N-1, in order or shuffled; the index sorted; random slots
of a pool 8 times larger), and in other program orders; beside them the decode kernel itself
(``bench_kda_decode``'s case) and a torch copy of the same bytes, interleaved over ``--rounds``.

    PYTHONPATH=$PWD python3 benchmarks/tools/decode_copy_structures.py
    PYTHONPATH=$PWD python3 benchmarks/tools/decode_copy_structures.py --index --ns 64 128
"""
import argparse
import statistics
import sys
from pathlib import Path

import torch
import triton
import triton.language as tl

from kimiops.bench.timing import copy_bandwidth, graph_us
from kimiops.gemm.skinny import prefetch_l2

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # bench_kda_decode, for index_study


@triton.jit
def tile_kernel(x, ROWS: tl.constexpr, PDL: tl.constexpr):
    if PDL:
        tl.extra.cuda.gdc_launch_dependents()
        tl.extra.cuda.gdc_wait()
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * ROWS * 128 + tl.arange(0, ROWS)[:, None] * 128 + tl.arange(0, 128)[None, :]
    v = tl.load(x + offs)
    tl.store(x + offs, v * 0.999)

@triton.jit
def persistent_kernel(x, NT, ROWS: tl.constexpr, PDL: tl.constexpr):
    if PDL:
        tl.extra.cuda.gdc_launch_dependents()
        tl.extra.cuda.gdc_wait()
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    base = tl.arange(0, ROWS)[:, None] * 128 + tl.arange(0, 128)[None, :]
    t = pid
    cur = tl.load(x + t.to(tl.int64) * ROWS * 128 + base, mask=t < NT)
    while t < NT:
        nt = t + nprog
        nxt = tl.load(x + nt.to(tl.int64) * ROWS * 128 + base, mask=nt < NT)
        tl.store(x + t.to(tl.int64) * ROWS * 128 + base, cur * 0.999)
        cur = nxt
        t = nt

@triton.jit
def indexed_tile_kernel(pool, idx, rep, cu, SLOTS, N, HV: tl.constexpr, NV: tl.constexpr, ROWS: tl.constexpr,
                        INDEX: tl.constexpr, PDL: tl.constexpr, PREFETCH: tl.constexpr, FIRST: tl.constexpr,
                        ORDER: tl.constexpr = 0, GROUP: tl.constexpr = 1):
    """In-place scale of tile iv (ROWS x 128 fp32) of head hv of sequence n's pool slot; grid N*HV*NV.

    INDEX, where the slot comes from: 0 n; 1 idx[n]; 2 idx[n] past L1 (.cg); 3 rep[(n*HV + hv)*32] (idx[n]
    again, one line per head); 4 idx[n] after cu_seqlens[n], [n+1] (the tile skipped when the sequence is
    empty); 5 idx[n] with the tile read past L1 (.cg), so the index's line can stay in L1 for the SM's next
    programs of sequence n; 6 n with the tile past L1; 7 (37 n) mod SLOTS (slots scattered, no load).
    PREFETCH, L2 hints between the PDL release and the wait (the previous grid may still run): 1 the index's
    line; 2 programs with pid < FIRST (those that can be resident before the previous grid ends) read idx[n]
    past L1 and prefetch their tile's 32 lines, the slot clamped to [0, SLOTS); 3 as 2 for every program.
    ORDER of the programs: 0 iv fastest, then hv, then n (the decode kernel's: pid = (n*HV + hv)*NV + iv);
    1 n fastest, then iv, then hv; 2 hv fastest, then iv, then n; 3 iv fastest, then n within groups of GROUP
    sequences, then hv, then the group (N a multiple of GROUP)."""
    pid = tl.program_id(0)
    if ORDER == 0:
        iv = pid % NV
        hv = (pid // NV) % HV
        n = pid // (NV * HV)
    elif ORDER == 1:
        n = pid % N
        iv = (pid // N) % NV
        hv = pid // (N * NV)
    elif ORDER == 2:
        hv = pid % HV
        iv = (pid // HV) % NV
        n = pid // (HV * NV)
    else:
        iv = pid % NV
        n_in = (pid // NV) % GROUP
        hv = (pid // (NV * GROUP)) % HV
        n = (pid // (NV * GROUP * HV)) * GROUP + n_in
    nh = n * HV + hv
    rows = tl.arange(0, ROWS)[:, None] * 128
    if PDL:
        tl.extra.cuda.gdc_launch_dependents()
        if PREFETCH == 1:
            prefetch_l2(idx + n + tl.zeros([1], tl.int32))
        elif PREFETCH >= 2:
            if (pid < FIRST) or (PREFETCH == 3):
                guess = tl.load(idx + n, cache_modifier=".cg").to(tl.int64)
                guess = tl.minimum(tl.maximum(guess, 0), SLOTS - 1)
                lines = ((guess * HV + hv) * 128 + iv * ROWS) * 128 + rows + tl.arange(0, 4)[None, :] * 32
                prefetch_l2(pool + lines)
        tl.extra.cuda.gdc_wait()
    live = True
    if INDEX == 0:
        slot = n.to(tl.int64)
    elif INDEX == 1:
        slot = tl.load(idx + n).to(tl.int64)
    elif INDEX == 2:
        slot = tl.load(idx + n, cache_modifier=".cg").to(tl.int64)
    elif INDEX == 3:
        slot = tl.load(rep + nh.to(tl.int64) * 32).to(tl.int64)
    elif INDEX == 4:
        live = tl.load(cu + n + 1) > tl.load(cu + n)
        slot = tl.load(idx + n).to(tl.int64)
    elif INDEX == 5:
        slot = tl.load(idx + n).to(tl.int64)
    elif INDEX == 6:
        slot = n.to(tl.int64)
    else:
        slot = (n.to(tl.int64) * 37) % SLOTS
    offs = ((slot * HV + hv) * 128 + iv * ROWS) * 128 + rows + tl.arange(0, 128)[None, :]
    if INDEX == 5 or INDEX == 6:
        v = tl.load(pool + offs, cache_modifier=".cg")
    else:
        v = tl.load(pool + offs, mask=live)
    tl.store(pool + offs, v * 0.999, mask=live)


INDEX_MODES = ("slot = n (no index)", "slot = idx[n]", "slot = idx[n] (.cg)", "slot = rep[n, hv] (line per head)",
               "slot = idx[n] after cu_seqlens", "slot = idx[n], tile past L1 (.cg)", "slot = n, tile past L1 (.cg)",
               "slot = 37 n mod slots (no load)")
PREFETCH_MODES = ("", "idx line to L2 before the wait", "first programs' tiles to L2 before the wait",
                  "every program's tile to L2 before the wait")


def index_study(ns, rounds: int) -> None:
    """Graph medians (20 chained calls, PDL) of the index modes of ``indexed_tile_kernel`` against the
    decode kernel and a torch copy of the same bytes, per N; median and best of the rounds."""
    import bench_kda_decode as bench

    bw = copy_bandwidth()
    HV, NV, ROWS = bench.HV, bench.V // 8, 8
    first = 32 * torch.cuda.get_device_properties(0).multi_processor_count  # most CTAs an SM holds: 32
    print(f"{torch.cuda.get_device_name()} torch {torch.__version__} triton {triton.__version__}; "
          f"copy bandwidth {bw / 1e12:.3f} TB/s; HV {HV}, K = V = 128, fp32 pool, 8 x 128 tiles on one warp")
    gen = torch.Generator(device="cuda").manual_seed(0)
    for N in ns:
        pool = torch.randn(2 * N, HV, bench.V, bench.K, device="cuda", generator=gen) * 0.1
        case = bench.Case(N, pool, gen)
        rep = case.idx.repeat_interleave(HV * 32)  # rep[(n*HV + hv)*32] = idx[n]
        src = torch.empty(N * HV * bench.V * bench.K, device="cuda")
        dst = torch.empty_like(src)
        nbytes = 2 * src.numel() * 4
        grid = (N * HV * NV,)

        def launch(index, prefetch=0, pdl=True, idx=case.idx, order=0, group=1, pool=pool):
            return lambda: indexed_tile_kernel[grid](
                pool, idx, rep, case.cu, pool.shape[0], N, HV=HV, NV=NV, ROWS=ROWS, INDEX=index, PDL=pdl,
                PREFETCH=prefetch, FIRST=first, ORDER=order, GROUP=group, num_warps=1, launch_pdl=pdl)

        calls = {f"mode {m}: {name}": launch(m) for m, name in enumerate(INDEX_MODES)}
        calls["mode 1 without PDL"] = launch(1, pdl=False)
        calls["mode 1 with idx = 0..N-1 (slot = n, loaded)"] = launch(1, idx=torch.arange(N, dtype=torch.int32, device="cuda"))
        calls["mode 1 with the index sorted"] = launch(1, idx=case.idx.sort().values.contiguous())
        shuffled = torch.randperm(N, device="cuda", generator=gen).to(torch.int32)
        calls["mode 1 with idx = 0..N-1 shuffled"] = launch(1, idx=shuffled)
        wide = torch.zeros(8 * N, HV, bench.V, bench.K, device="cuda")  # random slots over 8x the address range
        calls["mode 1, random slots of a pool of 8N"] = launch(1, idx=bench.Case(N, wide, gen).idx, pool=wide)
        for order, name in ((1, "n fastest, then iv, hv"), (2, "hv fastest, then iv, n")):
            calls[f"mode 0, programs {name}"] = launch(0, order=order)
            calls[f"mode 1, programs {name}"] = launch(1, order=order)
            calls[f"mode 7, programs {name}"] = launch(7, order=order)
        for group in (4, 16):
            calls[f"mode 0, programs iv, n in groups of {group}, hv"] = launch(0, order=3, group=group)
            calls[f"mode 1, programs iv, n in groups of {group}, hv"] = launch(1, order=3, group=group)
        for f in range(1, len(PREFETCH_MODES)):
            calls[f"mode 1, {PREFETCH_MODES[f]}"] = launch(1, prefetch=f)
        calls["decode kernel (table config)"] = case.ours()
        calls["torch copy_ of the same bytes"] = lambda: dst.copy_(src)
        res = {k: [] for k in calls}
        for _ in range(rounds):
            for k, fn in calls.items():
                res[k].append(graph_us([fn] * bench.GRAPH_CALLS))
        print(f"N = {N}: state bytes r+w {nbytes / 2**20:.0f} MiB; graph us per call, median / best of {rounds} rounds")
        for k, v in res.items():
            med = statistics.median(v)
            print(f"  {k:40s} {med:8.2f} / {min(v):8.2f} us  {100 * nbytes / (med * 1e-6) / bw:5.1f}% of copy bandwidth")


def structure_study() -> None:
    bw = copy_bandwidth()
    N, HV = 64, 32
    x = torch.randn(N * HV * 128 * 128, device="cuda")
    nbytes = 2 * x.numel() * 4
    print(f"copy bandwidth {bw/1e12:.3f} TB/s; state bytes r+w {nbytes/2**20:.0f} MiB")
    src = torch.empty_like(x)
    res = {}
    for rnd in range(3):
        res.setdefault("torch copy_ (out of place, same bytes)", []).append(graph_us([lambda: src.copy_(x)] * 20))
        for rows, nw in ((8, 1), (8, 2), (16, 1), (16, 2), (32, 4)):
            nt = x.numel() // (rows * 128)
            res.setdefault(f"tile {rows}x128 w{nw}", []).append(
                graph_us([lambda rows=rows, nw=nw, nt=nt: tile_kernel[(nt,)](x, ROWS=rows, PDL=True, num_warps=nw, launch_pdl=True)] * 20))
        for rows, nw, per_sm in ((8, 1, 16), (8, 1, 24), (8, 2, 8), (8, 2, 12), (16, 2, 8), (16, 4, 4), (8, 1, 32)):
            nt = x.numel() // (rows * 128)
            grid = 132 * per_sm
            res.setdefault(f"persistent {rows}x128 w{nw} {per_sm}/SM", []).append(
                graph_us([lambda rows=rows, nw=nw, nt=nt, grid=grid: persistent_kernel[(grid,)](x, nt, ROWS=rows, PDL=True, num_warps=nw, launch_pdl=True)] * 20))
    for k, v in res.items():
        us = min(v)
        print(f"{k:45s} {us:8.2f} us  {100 * nbytes / (us * 1e-6) / bw:5.1f}%")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--index", action="store_true", help="the pool index's cost instead of the CTA structures")
    p.add_argument("--ns", type=int, nargs="*", default=[64, 128])
    p.add_argument("--rounds", type=int, default=5)
    args = p.parse_args()
    if args.index:
        index_study(args.ns, args.rounds)
    else:
        structure_study()


if __name__ == "__main__":
    main()
