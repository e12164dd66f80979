"""Offline compile of ``chunk_state_kernel`` for sm_90 (no GPU needed, ``sm90_compile.py``) from the
source tree given as the first argument, with the narrow and the wide state configs
(``STATE_CONFIG_NARROW``, ``STATE_CONFIG_WIDE``) at HV = 32, K = V = 128, bf16 v/o, fp16 scratch:
registers, spill stores, shared memory, the mma/wgmma instructions in the PTX and its hash without
debug lines; then the wide config in pipelined parts (``PARTED``, ``PDL``) at 2, 3 and 4 stages
(shared memory per CTA: whether two state CTAs fit one SM). With ``--dims KxV --configs ...`` it
compiles the listed configs (``BV,num_warps,num_stages`` rows separated by ';', the power-of-two
scale with 4 warps and more) at those head dims instead, one launch, V-first states.

    python benchmarks/tools/state_compile_stats.py <tree>     # e.g. a git worktree of a revision
    python benchmarks/tools/state_compile_stats.py . --dims 256x256 --configs "32,4,2;16,4,2"
"""
import argparse
import re
import sys

ARGS = argparse.ArgumentParser(description=__doc__.split("\n")[0])
ARGS.add_argument("tree")
ARGS.add_argument("--dims", default="", help="KxV, e.g. 256x256 (with --configs)")
ARGS.add_argument("--configs", default="", help="BV,num_warps,num_stages rows separated by ';'")
ARGS = ARGS.parse_args()
sys.path.insert(0, ARGS.tree)
from sm90_compile import STATE_POINTERS as POINTERS, compile_sm90, ptx_digest  # noqa: E402

from kimiops.kda.kernels import chunk_state as cs  # noqa: E402


def const_for(cfg: dict, parted: bool, K: int = 128, V: int = 128) -> dict:
    """Constexprs at HV = 32 (K = V = 128 unless given): one sequence in one launch (V-first states,
    h0 and ht), or one pipelined part (PDL-chained, carry in and out, no h0)."""
    return dict(HV=32, K=K, V=V, C=32, BV=cfg["BV"], STATE_V_FIRST=not parted, HAS_H0=not parted,
                HAS_H0_IDX=False, HAS_HT=True, HAS_HT_IDX=False, IS_VARLEN=False, ORDERED=False,
                HI_FIRST=cfg["hi_first"], SPLIT_WS=cfg["split_ws"], SPLIT_KV=cfg["split_kv"],
                V_TILES_ADJACENT=False, GRID_3D=True, PARTED=parted, INV_PREC="tf32", PDL=parted,
                POW2_SCALE=cfg["pow2_scale"], SEG=0, TRACK_STEPS=0)


if ARGS.dims:
    K, V = (int(x) for x in ARGS.dims.split("x"))
    for row in ARGS.configs.split(";"):
        bv, warps, stages = (int(x) for x in row.split(","))
        cfg = dict(cs.STATE_CONFIG_WIDE, BV=bv, num_warps=warps, num_stages=stages, pow2_scale=warps >= 4)
        k, regs = compile_sm90(cs.chunk_state_kernel, POINTERS, const_for(cfg, False, K, V),
                               dict(num_warps=warps, num_stages=stages))
        mma = {m: len(re.findall(m, k.asm["ptx"])) for m in ("mma.sync", "wgmma.mma_async")}
        print(f"K {K} V {V} BV {bv}, {warps} warps, {stages} stages: {regs}; shared {k.metadata.shared} B; {mma}",
              flush=True)
    sys.exit(0)

for name, cfg in (("narrow", cs.STATE_CONFIG_NARROW), ("wide", cs.STATE_CONFIG_WIDE)):
    k, regs = compile_sm90(cs.chunk_state_kernel, POINTERS, const_for(cfg, parted=False),
                           dict(num_warps=cfg["num_warps"], num_stages=cfg["num_stages"]))
    mma = {m: len(re.findall(m, k.asm["ptx"])) for m in ("mma.sync", "wgmma.mma_async")}
    print(f"{name} {cfg}: {regs}; shared {k.metadata.shared} B; {mma}; PTX sha1 {ptx_digest(k.asm['ptx'])} "
          "(without debug lines)", flush=True)

cfg = cs.STATE_CONFIG_WIDE
for stages in (2, 3, 4):
    k, regs = compile_sm90(cs.chunk_state_kernel, POINTERS, const_for(cfg, parted=True),
                           dict(num_warps=cfg["num_warps"], num_stages=stages))
    print(f"wide in parts, {stages} stages: {regs}; shared {k.metadata.shared} B", flush=True)
