import sys
sys.path.insert(0, "benchmarks/tools")
import triton.language as tl
from sm90_compile import compile_sm90, ptx_digest
from kimiops.kda.kernels import chunk_intra as ci
ptr = {n: "*bf16" for n in ("q", "k", "g", "beta")}
ptr.update({"A_log": "*fp32", "dt_bias": "*fp32", "cu_seqlens": "*i32", "w_out": "*fp16", "tb_out": "*fp32",
            "qg_out": "*fp16", "kg_out": "*fp16", "aqk_out": "*fp16", "gc_out": "*fp32", "chain_done": "*i32"})
for gate in (0, 1, 2):
    const = dict(H=32, HV=32, K=128, C=32, BC=16, BK=16, BK2=16, GATE=gate, HAS_A=gate != 0, HAS_DT_BIAS=gate != 0,
                 USE_L2NORM=True, USE_BETA_SIGMOID=True, NEG_EIGVAL=False, IS_VARLEN=False, LOG_N=1, DOT_DT=tl.float16,
                 INV_PREC="tf32", LOOP_STAGES=3, ABL=0, STASH_G=gate != 0, DIAG_ANCHOR=gate == 2, PDL=0)
    k, regs = compile_sm90(ci.chunk_intra_kernel, ptr, const, dict(num_warps=2, num_stages=1, maxnreg=168))
    print(f"gate={gate}: ptx {ptx_digest(k.asm['ptx'])} {regs}")
