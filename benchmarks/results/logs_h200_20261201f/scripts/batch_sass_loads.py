"""The global loads, branches and exits of the decode kernel's first 300 SASS instructions (offline sm_90 compile):
where ptxas puts the state tile's loads against the first token's. Env: BV, NW, VARLEN=1, EARLY=0/1."""
import os, sys
sys.path.insert(0, "/work/main/benchmarks/tools")
from sm90_compile import compile_sm90, _sass_lines
from kimiops.kda.kernels import recurrent as rec
P = {n: "*bf16" for n in ("q", "k", "v", "g", "beta", "o")}
P.update({"h0": "*fp32", "ht": "*fp32", "h0_idx": "*i32", "ht_idx": "*i32", "cu_seqlens": "*i32",
          "A_log": "*fp32", "dt_bias": "*fp32", "num_acc": "*i32", "parent": "*i32"})
bv, nw = int(os.environ.get("BV", 8)), int(os.environ.get("NW", 1))
const = dict(HV=32, G=1, K=128, V=128, BK=128, BV=bv, NV=128 // bv, S0_SLOT=32 * 128 * 128, S0_HEAD=128 * 128,
             ST_SLOT=32 * 128 * 128, ST_HEAD=128 * 128, V_FIRST=True, IS_VARLEN=os.environ.get("VARLEN") == "1", HAS_H0=True, HAS_H0_IDX=True,
             HAS_HT=True, HAS_HT_IDX=True, INPLACE=True, SKIP_PADDED=True, USE_QK_L2NORM=True,
             USE_BETA_SIGMOID=True, USE_GATE=True, USE_LOWER_BOUND=False, HAS_A=True, HAS_DT_BIAS=True,
             EVEN_K=True, EVEN_V=True, PDL=True, STREAM_HINTS=False, NEG_EIGVAL=False, SPEC=False,
             HAS_NUM_ACC=False, STEPS=0, ST_ROW=0, HAS_PARENT=False, EARLY_INPUTS=os.environ.get("EARLY", "1") == "1")
k, regs = compile_sm90(rec._recurrent_kda_fwd_kernel, P, const, dict(num_warps=nw, num_stages=1))
for i, l in enumerate(_sass_lines(k.asm["cubin"])):
    if any(x in l for x in ("LDG", "BRA", "EXIT")) and i < 300:
        print(i, l.split("*/")[1].split(";")[0].strip())
