"""What Triton's specialization of the prefill kernels' integer arguments changes in their machine code
(offline sm_90 compile, no GPU needed, ``sm90_compile.py``).

Triton compiles a separate kernel for each combination of "this int is 1" / "divisible by 16" / other
over the integer arguments it specializes. The prefill kernels take the call's counts (``T``, ``N``,
``NT``, the part bounds, the grid size) as such arguments, so a serving engine whose extends have new
token and request counts every call compiles new variants of stage 1 and of the state stage as those
counts fall into new classes. This compiles ``chunk_intra_kernel``, ``chunk_state_kernel`` (whole, one
part, the segmented walk's two launches) and ``segment_starts_kernel`` at H = HV = 32, K = V = 128 (bf16
inputs, the default configs) with the counts of a few calls
specialized three ways: every count as Triton would ("all": the kernels before ``CALL_COUNTS``), as the
launcher passes them now ("launched": ``T`` through ``kernel_rows``, 0 for varlen calls, and the
``CALL_COUNTS`` not specialized) and none ("plain"); it prints per variant the SASS instruction count,
a hash of the opcode sequence, and registers and spill stores.

    python benchmarks/tools/int_specialization_sass.py <tree>     # e.g. . or a git worktree
"""
import sys

sys.path.insert(0, sys.argv[1] if len(sys.argv) > 1 else ".")
import triton.language as tl  # noqa: E402
from sm90_compile import (  # noqa: E402
    INTRA_POINTERS, STATE_POINTERS, compile_sm90, sass_instruction_count, sass_opcode_digest)

from kimiops.kda.kernels import chunk_intra as ci  # noqa: E402
from kimiops.kda.kernels.chunk_layout import CALL_COUNTS, kernel_rows  # noqa: E402
from kimiops.kda.kernels import chunk_state as cs  # noqa: E402


def classes(values: dict, plain=()) -> tuple[dict, tuple]:
    """Triton's specialization of int arguments: ``(constants (value 1), names divisible by 16)``;
    none for the names in ``plain`` (``do_not_specialize``)."""
    kept = {n: x for n, x in values.items() if n not in plain}
    return {n: 1 for n, x in kept.items() if x == 1}, tuple(n for n, x in kept.items() if x != 1 and x % 16 == 0)


def as_launched(values: dict, varlen: bool) -> tuple[dict, tuple]:
    """The specialization of the counts as the launcher passes them now: ``T`` through
    ``kernel_rows`` (0 for varlen), the names of ``CALL_COUNTS`` unspecialized."""
    values = dict(values, T=kernel_rows(values["T"], varlen)) if "T" in values else values
    return classes(values, CALL_COUNTS)


def intra_const(varlen: bool, log_n: int, pdl: int) -> dict:
    """Stage 1's constexprs as ``chunk._launch_intra`` passes them, precomputed g, the L2 norm in the kernel."""
    c = ci.INTRA_CONFIG
    return dict(H=32, HV=32, K=128, C=32, BC=16, BK=c["BK"], BK2=c["BK2"], GATE=0, HAS_A=False, HAS_DT_BIAS=False,
                USE_L2NORM=True, USE_BETA_SIGMOID=False, NEG_EIGVAL=False, IS_VARLEN=varlen, LOG_N=log_n,
                DOT_DT=tl.float16, INV_PREC="tf32", LOOP_STAGES=c["loop_stages"], STASH_G=c["stash_g"],
                DIAG_ANCHOR=False, ABL=0, PDL=pdl)


def state_const(varlen: bool, parted: bool, seg: int = 0) -> dict:
    """The state stage's constexprs, wide config, V-first pool with indices (varlen) or h0 / ht (fixed);
    ``seg``: the segmented walk's launch (1 maps, 2 segments with the output), fixed length."""
    c = cs.STATE_CONFIG_WIDE
    return dict(HV=32, K=128, V=128, C=32, BV=c["BV"], STATE_V_FIRST=True, HAS_H0=not parted and seg != 1,
                HAS_H0_IDX=varlen, HAS_HT=seg != 1, HAS_HT_IDX=varlen, IS_VARLEN=varlen, ORDERED=varlen,
                HI_FIRST=c["hi_first"], SPLIT_WS=c["split_ws"], SPLIT_KV=c["split_kv"], V_TILES_ADJACENT=False,
                GRID_3D=True, PARTED=parted, INV_PREC="tf32", PDL=parted, POW2_SCALE=c["pow2_scale"], SEG=seg,
                TRACK_STEPS=0)


def starts_const() -> dict:
    """``segment_starts_kernel``'s constexprs (``SEGMENT_STARTS_CONFIG``), fixed length, h0."""
    c = cs.SEGMENT_STARTS_CONFIG
    return dict(HV=32, K=128, V=128, C=32, BV=c["BV"], STATE_V_FIRST=True, HAS_H0=True, HAS_H0_IDX=False,
                IS_VARLEN=False, PREC=c["prec"], BJ=cs.starts_map_columns(128))


def intra_options() -> dict:
    """Stage 1's launch options (``INTRA_CONFIG``)."""
    c = ci.INTRA_CONFIG
    return dict(num_warps=c["num_warps"], num_stages=c["num_stages"], maxnreg=c["maxnreg"])


def state_options(stages: int | None = None) -> dict:
    """The wide state config's launch options (``stages``: pipelined parts take 4)."""
    w = cs.STATE_CONFIG_WIDE
    return dict(num_warps=w["num_warps"], num_stages=stages or w["num_stages"])


def seg_counts(T: int, seg_len: int, seg_max: int) -> dict:
    """The segmented walk's counts for one sequence of ``T`` tokens."""
    return dict(T=T, NT=T // 32, slot_lo=0, slot_hi=T // 32, seg_len=seg_len, seg_max=seg_max)


def varlen_state(T: int, NC: int) -> dict:
    """The state stage's counts for a varlen call of ``T`` tokens in ``NC`` chunk slots, one launch."""
    return dict(T=T, NT=0, slot_lo=0, slot_hi=NC, seg_len=0, seg_max=0)


def varlen_intra(T: int, N: int, NC: int) -> dict:
    """Stage 1's counts for a varlen call of ``N`` sequences, ``T`` tokens, ``NC`` chunk slots, 32 heads."""
    return dict(T=T, N=N, NT=0, slot_off=0, n_programs=NC * 32)


# (call, kernel, pointer types, the call's counts, constexprs, options): chunk slots as ``chunk_slots`` gives them
ROWS = [
    ("varlen 5 requests, 1000 tokens", "stage 1", varlen_intra(1000, 5, 36), intra_const(True, 3, 0), intra_options()),
    ("varlen 5 requests, 1000 tokens", "state", varlen_state(1000, 36), state_const(True, False), state_options()),
    ("varlen 5 requests, 1024 tokens", "stage 1", varlen_intra(1024, 5, 37), intra_const(True, 3, 0), intra_options()),
    ("varlen 5 requests, 1024 tokens", "state", varlen_state(1024, 37), state_const(True, False), state_options()),
    ("one request of 1 token", "stage 1", varlen_intra(1, 1, 1), intra_const(True, 1, 0), intra_options()),
    ("one request of 1 token", "state", varlen_state(1, 1), state_const(True, False), state_options()),
    ("B8 T1024", "stage 1", dict(T=1024, N=8, NT=32, slot_off=0, n_programs=256 * 32), intra_const(False, 4, 0),
     intra_options()),
    ("B8 T1024", "state", dict(T=1024, NT=32, slot_lo=0, slot_hi=256, seg_len=0, seg_max=0), state_const(False, False),
     state_options()),
    ("B1 T8192, part 2 of 4", "stage 1", dict(T=8192, N=1, NT=256, slot_off=64, n_programs=64 * 32),
     intra_const(False, 1, 2), intra_options()),
    ("B1 T8192, part 2 of 4", "state", dict(T=8192, NT=256, slot_lo=64, slot_hi=128, seg_len=0, seg_max=0),
     state_const(False, True), state_options(4)),
    ("B1 T8192, 16 segments of 16", "maps", seg_counts(8192, 16, 16), state_const(False, False, 1), state_options()),
    ("B1 T8192, 16 segments of 16", "starts", dict(T=8192, seg_len=16, seg_max=16), starts_const(),
     dict(num_warps=cs.SEGMENT_STARTS_CONFIG["num_warps"], num_stages=cs.SEGMENT_STARTS_CONFIG["num_stages"])),
    ("B1 T8192, 16 segments of 16", "segments", seg_counts(8192, 16, 16), state_const(False, False, 2),
     state_options()),
]
KERNELS = {"stage 1": (ci.chunk_intra_kernel, INTRA_POINTERS), "state": (cs.chunk_state_kernel, STATE_POINTERS),
           "maps": (cs.chunk_state_kernel, STATE_POINTERS), "segments": (cs.chunk_state_kernel, STATE_POINTERS),
           "starts": (cs.segment_starts_kernel, STATE_POINTERS)}


def main() -> None:
    print("offline sm_90 (triton 3.6), H = HV = 32, K = V = 128; per variant: SASS instructions, opcode hash, "
          "ptxas registers / spills, (counts specialized as 1, as divisible by 16)")
    for name, what, counts, const, opts in ROWS:
        kernel, pointers = KERNELS[what]
        varlen = const["IS_VARLEN"]
        for how, (ones, div) in (("all", classes(counts)), ("launched", as_launched(counts, varlen)),
                                 ("plain", ({}, ()))):
            k, regs = compile_sm90(kernel, pointers, dict(const, **ones), opts, divisible=div)
            print(f"{name:<31} {what:<8} {how:<8} {sass_instruction_count(k.asm['cubin']):6d}  "
                  f"{sass_opcode_digest(k.asm['cubin'])}  {regs}  (1: {sorted(ones)}, /16: {sorted(div)})",
                  flush=True)


if __name__ == "__main__":
    main()
