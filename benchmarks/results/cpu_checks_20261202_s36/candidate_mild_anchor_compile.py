"""Offline sm_90 compile of stage 1 on the exp/mild-anchor candidate (registers, spills, static SASS
instructions) with MILD_ANCHOR off and on, per gate (H = HV = 32, K = 128, bf16, default config):

    python3 benchmarks/results/cpu_checks_20261202_s36/candidate_mild_anchor_compile.py <worktree of exp/mild-anchor>
"""
import os
import sys

TREE = sys.argv[1] if len(sys.argv) > 1 else os.getcwd()
sys.path.insert(0, TREE)
sys.path.insert(0, os.path.join(TREE, "benchmarks", "tools"))
import triton.language as tl  # noqa: E402
from sm90_compile import compile_sm90, sass_instruction_count  # noqa: E402

from kimiops.kda.kernels import chunk_intra as ci  # noqa: E402

ptr = {n: "*bf16" for n in ("q", "k", "g", "beta")}
ptr.update({"A_log": "*fp32", "dt_bias": "*fp32", "cu_seqlens": "*i32", "w_out": "*fp16", "tb_out": "*fp32",
            "qg_out": "*fp16", "kg_out": "*fp16", "aqk_out": "*fp16", "gc_out": "*fp32", "chain_done": "*i32"})
print(f"kimiops from {os.path.dirname(ci.__file__)}")
for gate in (0, 1, 2):
    for mild in (False, True):
        if gate == 2 and mild:
            continue
        const = dict(H=32, HV=32, K=128, C=32, BC=16, BK=16, BK2=16, GATE=gate, HAS_A=gate != 0, HAS_DT_BIAS=gate != 0,
                     USE_L2NORM=True, USE_BETA_SIGMOID=False, NEG_EIGVAL=False, IS_VARLEN=False, LOG_N=1,
                     DOT_DT=tl.float16, INV_PREC="tf32", LOOP_STAGES=3, ABL=0, STASH_G=gate != 0,
                     DIAG_ANCHOR=gate == 2, MILD_ANCHOR=mild, PDL=0)
        k, regs = compile_sm90(ci.chunk_intra_kernel, ptr, const, dict(num_warps=2, num_stages=1, maxnreg=168))
        print(f"gate={gate} MILD_ANCHOR={mild}: {regs}; SASS instructions (static) "
              f"{sass_instruction_count(k.asm['cubin'])}", flush=True)
