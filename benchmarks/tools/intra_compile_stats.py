"""Offline compile of ``chunk_intra_kernel`` for sm_90 (no GPU needed, ``sm90_compile.py``) from the
source tree given as the first argument, with the default stage-1 config at H = HV = 32,
K = V = 128, bf16 inputs, without and with the softplus gate (with the gate also with and without
``STASH_G``; trees that predate it ignore the flag): registers, spill stores,
gate evaluations per loop of the TTGIR (calls of ``__nv_fast_logf``, the softplus gate's log
until 2026-12-02, or ``__nv_fast_fdividef``, its division since), SASS instructions, and a hash of the PTX without
debug lines (equal hashes: the same machine code before ptxas).

    python benchmarks/tools/intra_compile_stats.py <tree>     # e.g. a git worktree of a revision
"""
import sys

sys.path.insert(0, sys.argv[1])
import triton.language as tl  # noqa: E402
from sm90_compile import INTRA_POINTERS as POINTERS, compile_sm90, ptx_digest, sass_instruction_count  # noqa: E402

from kimiops.kda.kernels import chunk_intra as ci  # noqa: E402


for gate, stash in ((0, False), (1, False), (1, True)):  # STASH_G: the gate evaluated once (since 2026-11-30)
    const = dict(H=32, HV=32, K=128, V=128, C=32, BC=16, BK=16, BK2=16, BVI=32, GATE=gate, HAS_A=gate != 0,
                 HAS_DT_BIAS=gate != 0, USE_L2NORM=True, USE_BETA_SIGMOID=False, NEG_EIGVAL=False, IS_VARLEN=False, LOG_N=1,
                 DOT_DT=tl.float16, INV_PREC="tf32", LOOP_STAGES=3, ABL=0, STASH=True, STASH_G=stash, DIAG_ANCHOR=False, PDL=0)
    k, regs = compile_sm90(ci.chunk_intra_kernel, POINTERS, const, dict(num_warps=2, num_stages=1, maxnreg=168))
    loops, per = 0, {}
    for line in k.asm["ttgir"].split("\n"):
        if "scf.for" in line:
            loops += 1
        if "__nv_fast_logf" in line or "__nv_fast_fdividef" in line:
            per[loops] = per.get(loops, 0) + 1
    print(f"gate={gate} stash_g={stash}: {regs}; gate evaluations per loop (1 = pass 1, 2 = pass 2) {per}; "
          f"SASS instructions {sass_instruction_count(k.asm['cubin'])}; "
          f"PTX sha1 {ptx_digest(k.asm['ptx'])}", flush=True)
