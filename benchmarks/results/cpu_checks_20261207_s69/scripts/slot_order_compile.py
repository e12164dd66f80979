"""Offline sm_90 compile of the decode kernel with the slot order flag (SLOT_BLOCK 0 = off, 64, 128) for the
bench case (pool mode, softplus gate, L2 norm, sigmoid, bf16 inputs, fp32 V-first pool, 8 x 128 tiles on one
warp), both forms: registers, shared memory and SASS instruction count. Run from a tree with
decode_slot_order.patch applied:

    python3 benchmarks/results/cpu_checks_20261207_s69/scripts/slot_order_compile.py
"""
import sys
sys.path.insert(0, "benchmarks/tools"); sys.path.insert(0, ".")
from sm90_compile import compile_sm90, sass_instruction_count
from kimiops.kda.kernels import recurrent as rec
P = {n: "*bf16" for n in ("q", "k", "v", "g", "beta", "o")}
P.update({"h0": "*fp32", "ht": "*fp32", "h0_idx": "*i32", "ht_idx": "*i32", "cu_seqlens": "*i32",
          "A_log": "*fp32", "dt_bias": "*fp32", "num_acc": "*i32", "parent": "*i32"})
K = V = 128; HV = 32
for varlen, bv, nw, hints, early in [(True, 8, 1, True, False), (False, 8, 1, True, True)]:
    for sb in (0, 64, 128):
        c = dict(HV=HV, G=1, K=K, V=V, BK=K, BV=bv, NV=V // bv, S0_SLOT=HV * V * K, S0_HEAD=V * K,
                 ST_SLOT=HV * V * K, ST_HEAD=V * K, V_FIRST=True, IS_VARLEN=varlen, HAS_H0=True, HAS_H0_IDX=True,
                 HAS_HT=True, HAS_HT_IDX=True, INPLACE=True, SKIP_PADDED=True, USE_QK_L2NORM=True,
                 USE_BETA_SIGMOID=True, USE_GATE=True, USE_LOWER_BOUND=False, HAS_A=True, HAS_DT_BIAS=True,
                 EVEN_K=True, EVEN_V=True, PDL=True, STREAM_HINTS=hints, NEG_EIGVAL=False, SPEC=False,
                 HAS_NUM_ACC=False, STEPS=0, ST_ROW=0, HAS_PARENT=False,
                 EARLY_INPUTS=early, WAIT_FIRST=False, PAD_SLOT=-1, SLOT_BLOCK=sb)
        k, regs = compile_sm90(rec._recurrent_kda_fwd_kernel, P, c, dict(num_warps=nw, num_stages=1))
        print(f"varlen={varlen} SLOT_BLOCK={sb}: regs {regs} smem {k.metadata.shared} sass instr {sass_instruction_count(k.asm['cubin'])}", flush=True)
