"""How close to copy bandwidth can the decode state traffic get, by CTA structure? In-place scale of
N*HV 64 KiB fp32 states (N = 64, HV = 32: 128 MiB read + 128 MiB written), graph of 20 chained calls
with PDL, like bench_kda_decode.py. Structures: one tile of ROWS x 128 fp32 per CTA (the decode
kernel's), and a persistent grid whose CTAs walk tiles with the next tile's load issued before the
current tile is stored (register double buffering).

    PYTHONPATH=$PWD python3 benchmarks/tools/decode_copy_structures.py
"""
import torch
import triton
import triton.language as tl

from kimiops.bench.timing import copy_bandwidth, graph_us

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

def main() -> None:
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


if __name__ == "__main__":
    main()
