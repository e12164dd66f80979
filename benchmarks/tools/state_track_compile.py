"""Offline sm_90 compile of ``chunk_state_kernel`` for the state-snapshot change (no GPU needed):
for each source tree given, SEG 0 (one piece, and a pipelined part), 1 and 2 at the wide tile, 32
value heads (4 in segments), K = V = 128, V-first pool states; prints registers, spills, shared
memory and the SASS opcode digest (equal digests: the same machine code up to operands such as
parameter offsets). On a tree that has ``TRACK_STEPS``, also the variants with snapshots (2).

    python benchmarks/tools/state_track_compile.py <old tree> <new tree>
"""
import inspect
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sm90_compile import compile_sm90, sass_opcode_digest  # noqa: E402

POINTERS = {"w": "*fp16", "tb": "*fp32", "qg": "*fp16", "kg": "*fp16", "aqk": "*fp16", "gc": "*fp32",
            "v": "*bf16", "o": "*bf16", "h0": "*fp32", "h0_indices": "*i32", "ht": "*fp32", "ht_indices": "*i32",
            "cu_seqlens": "*i32", "order": "*i32", "carry": "*fp32", "track": "*fp32", "track_idx": "*i32"}
VARIANTS = [("one piece", dict(SEG=0, PARTED=False, PDL=False, HV=32)),
            ("part", dict(SEG=0, PARTED=True, PDL=True, HV=32)),
            ("map walk", dict(SEG=1, PARTED=False, PDL=False, HV=4)),
            ("segment walk", dict(SEG=2, PARTED=False, PDL=False, HV=4))]


def main() -> None:
    for tree in sys.argv[1:]:
        sys.path.insert(0, tree)
        for mod in [m for m in sys.modules if m.startswith("kimiops")]:
            del sys.modules[mod]
        from kimiops.kda.kernels import chunk_state as cs
        has_track = "TRACK_STEPS" in inspect.signature(cs.chunk_state_kernel.fn).parameters
        wide = cs.STATE_CONFIG_WIDE
        for label, var in VARIANTS:
            for steps in ((0, 2) if has_track and var["SEG"] != 1 else (0,)):
                const = dict(K=128, V=128, C=32, BV=wide["BV"], STATE_V_FIRST=True, HAS_H0=var["SEG"] != 1,
                             HAS_H0_IDX=True, HAS_HT=var["SEG"] != 1, HAS_HT_IDX=True, IS_VARLEN=True, ORDERED=False,
                             HI_FIRST=wide["hi_first"], SPLIT_WS=wide["split_ws"], SPLIT_KV=wide["split_kv"],
                             V_TILES_ADJACENT=False, GRID_3D=True, INV_PREC="tf32", POW2_SCALE=wide["pow2_scale"],
                             TRACK_STEPS=steps, **var)
                stages = 4 if var["PARTED"] else wide["num_stages"]
                k, regs = compile_sm90(cs.chunk_state_kernel, POINTERS, const,
                                       dict(num_warps=wide["num_warps"], num_stages=stages))
                print(f"{tree}: {label}, TRACK_STEPS {steps}: {regs}; shared {k.metadata.shared} B; "
                      f"SASS opcodes {sass_opcode_digest(k.asm['cubin'])}", flush=True)
        sys.path.remove(tree)


if __name__ == "__main__":
    main()
