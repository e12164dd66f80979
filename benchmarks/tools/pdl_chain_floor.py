"""The floor under a batch-1 decode call: CUDA-graph medians of chains of trivial kernels with the
decode kernel's grid (512 CTAs of 2 warps), next to the decode call itself at N = 1.

Kernels (each launched 20 times back to back in one graph, like ``bench_kda_decode.py``):
- ``empty``: the PDL handshake only (allow the next grid, wait for the previous one);
- ``tile``: then read the pool index, read this CTA's 4 KiB of the indexed state slot and write it
  back scaled: the decode kernel's two dependent memory round trips and its store, no math;
- each with programmatic dependent launch on and off.

    PYTHONPATH=$PWD python3 benchmarks/tools/pdl_chain_floor.py
"""
import sys
from pathlib import Path

import torch
import triton
import triton.language as tl

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import bench_kda_decode as bench  # noqa: E402

from kimiops.bench.timing import graph_us  # noqa: E402


@triton.jit
def _empty_kernel(x, PDL: tl.constexpr):
    if PDL:
        tl.extra.cuda.gdc_launch_dependents()
        tl.extra.cuda.gdc_wait()


@triton.jit
def _tile_kernel(pool, idx, SLOT: tl.constexpr, TILE: tl.constexpr, PDL: tl.constexpr):
    if PDL:
        tl.extra.cuda.gdc_launch_dependents()
        tl.extra.cuda.gdc_wait()
    pid = tl.program_id(0)
    slot = tl.load(idx).to(tl.int64)
    offs = slot * SLOT + pid * TILE + tl.arange(0, TILE)
    x = tl.load(pool + offs)
    tl.store(pool + offs, x * 0.5)


def main() -> None:
    gen = torch.Generator(device="cuda").manual_seed(0)
    pool = torch.randn(16, bench.HV, bench.V, bench.K, device="cuda", generator=gen) * 0.1
    case = bench.Case(1, pool, gen)
    slot = bench.HV * bench.V * bench.K
    tile = 8 * bench.K
    grid = (slot // tile,)
    rows = []
    for rnd in range(3):
        for pdl in (True, False):
            e = graph_us([lambda pdl=pdl: _empty_kernel[grid](pool, PDL=pdl, num_warps=2, launch_pdl=pdl)] * bench.GRAPH_CALLS)
            t = graph_us([lambda pdl=pdl: _tile_kernel[grid](pool, case.idx, SLOT=slot, TILE=tile, PDL=pdl,
                                                             num_warps=2, launch_pdl=pdl)] * bench.GRAPH_CALLS)
            rows.append((rnd, pdl, e, t))
        d = graph_us([case.ours()] * bench.GRAPH_CALLS)
        rows.append((rnd, "decode", d, None))
    print(f"{torch.cuda.get_device_name()} torch {torch.__version__} triton {triton.__version__}; "
          f"grid {grid[0]} CTAs x 2 warps, {bench.GRAPH_CALLS} chained calls per graph, per-call medians")
    for rnd, pdl, a, b in rows:
        if pdl == "decode":
            print(f"round {rnd}: decode N=1 (shipped kernel) {a:.2f} us")
        else:
            print(f"round {rnd}: PDL {'on ' if pdl else 'off'}: empty {a:.2f} us, index + 4 KiB tile read/write {b:.2f} us")


if __name__ == "__main__":
    main()
