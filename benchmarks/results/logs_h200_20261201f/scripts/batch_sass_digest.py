"""SASS opcode digests of the decode kernel in batch mode (IS_VARLEN=False) for four configs, compiled offline for
sm_90 from the kimiops tree first on sys.path; EARLY=0 switches early_inputs off (trees before 7b53e8f ignore it)."""
import os, sys
sys.path.insert(0, "/work/main/benchmarks/tools")
from sm90_compile import compile_sm90, sass_opcode_digest
from kimiops.kda.kernels import recurrent as rec
P = {n: "*bf16" for n in ("q", "k", "v", "g", "beta", "o")}
P.update({"h0": "*fp32", "ht": "*fp32", "h0_idx": "*i32", "ht_idx": "*i32", "cu_seqlens": "*i32",
          "A_log": "*fp32", "dt_bias": "*fp32", "num_acc": "*i32", "parent": "*i32"})
for bv, nw, hints in ((8, 1, False), (8, 1, True), (8, 4, False), (16, 2, False)):
    const = dict(HV=32, G=1, K=128, V=128, BK=128, BV=bv, NV=128 // bv, S0_SLOT=32 * 128 * 128, S0_HEAD=128 * 128,
                 ST_SLOT=32 * 128 * 128, ST_HEAD=128 * 128, V_FIRST=True, IS_VARLEN=False, HAS_H0=True, HAS_H0_IDX=True,
                 HAS_HT=True, HAS_HT_IDX=True, INPLACE=True, SKIP_PADDED=True, USE_QK_L2NORM=True,
                 USE_BETA_SIGMOID=True, USE_GATE=True, USE_LOWER_BOUND=False, HAS_A=True, HAS_DT_BIAS=True,
                 EVEN_K=True, EVEN_V=True, PDL=True, STREAM_HINTS=hints, NEG_EIGVAL=False, SPEC=False,
                 HAS_NUM_ACC=False, STEPS=0, ST_ROW=0, HAS_PARENT=False, EARLY_INPUTS=os.environ.get("EARLY", "1") == "1")
    k, regs = compile_sm90(rec._recurrent_kda_fwd_kernel, P, const, dict(num_warps=nw, num_stages=1))
    print(bv, nw, hints, regs, sass_opcode_digest(k.asm["cubin"]))
