"""Offline compile for sm_90 (no GPU needed, ``sm90_compile.py``) of the segmented state walk's
kernels: ``chunk_state_kernel`` with ``SEG`` 0, 1 and 2 (wide tile, 4 value heads, K = V = 128,
fixed-length and varlen) and ``segment_starts_kernel`` at K = 128 (the whole map per stage) and
K = 256 (64 map columns per stage): registers, spill stores, shared memory and the PTX's hash
without debug lines (equal hashes: a refactor changed no code).

    python benchmarks/tools/segment_compile_stats.py
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from sm90_compile import STATE_POINTERS as POINTERS, compile_sm90, ptx_digest  # noqa: E402

from kimiops.kda.kernels import chunk_state as cs  # noqa: E402


def main() -> None:
    wide = cs.STATE_CONFIG_WIDE
    for seg in (0, 1, 2):
        for varlen in (False, True):
            const = dict(HV=4, K=128, V=128, C=32, BV=wide["BV"], STATE_V_FIRST=True, HAS_H0=seg != 1,
                         HAS_H0_IDX=True, HAS_HT=seg != 1, HAS_HT_IDX=True, IS_VARLEN=varlen, ORDERED=False,
                         HI_FIRST=wide["hi_first"], SPLIT_WS=wide["split_ws"], SPLIT_KV=wide["split_kv"],
                         V_TILES_ADJACENT=False, GRID_3D=True, PARTED=False, INV_PREC="tf32", PDL=False,
                         POW2_SCALE=wide["pow2_scale"], SEG=seg, TRACK_STEPS=0)
            k, regs = compile_sm90(cs.chunk_state_kernel, POINTERS, const,
                                   dict(num_warps=wide["num_warps"], num_stages=wide["num_stages"]))
            print(f"chunk_state_kernel SEG {seg} varlen {varlen}: {regs}; shared {k.metadata.shared}; "
                  f"ptx {ptx_digest(k.asm['ptx'])}", flush=True)
    stc = cs.SEGMENT_STARTS_CONFIG
    for K in (128, 256):
        bj = cs.starts_map_columns(K)
        const = dict(HV=4, K=K, V=K, C=32, BV=stc["BV"], STATE_V_FIRST=True, HAS_H0=True, HAS_H0_IDX=True,
                     IS_VARLEN=True, PREC=stc["prec"], BJ=bj)
        k, regs = compile_sm90(cs.segment_starts_kernel, POINTERS, const,
                               dict(num_warps=stc["num_warps"], num_stages=stc["num_stages"]))
        print(f"segment_starts_kernel K {K} BJ {bj}: {regs}; shared {k.metadata.shared}; "
              f"ptx {ptx_digest(k.asm['ptx'])}", flush=True)


if __name__ == "__main__":
    main()
