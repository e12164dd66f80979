"""Does triton 3.6 round fp32 operands before a tf32 dot? Counts, in the sm_90 PTX of stage 1 with the lower-bound gate
(the anchored diagonal: tl.dot(..., input_precision=\"tf32\")), cvt.rna.tf32 conversions against tf32 and fp16 mma
instructions. From the repo root: python3 benchmarks/results/cpu_checks_20261201_s33/tf32_dot_ptx_check.py"""
import sys, os, re
sys.path.insert(0, "benchmarks/tools"); sys.path.insert(0, ".")
import triton.language as tl
from sm90_compile import compile_sm90
from kimiops.kda.kernels import chunk_intra as ci
from intra_sass_regions import POINTERS
cfg = ci.INTRA_CONFIG
const = dict(H=32, HV=32, K=128, C=32, BC=16, BK=16, BK2=16, GATE=2, HAS_A=True, HAS_DT_BIAS=True, USE_L2NORM=True,
             USE_BETA_SIGMOID=False, NEG_EIGVAL=False, IS_VARLEN=False, LOG_N=1, DOT_DT=tl.float16, INV_PREC="tf32",
             LOOP_STAGES=3, ABL=0, STASH_G=True, DIAG_ANCHOR=True, PDL=0)
k, regs = compile_sm90(ci.chunk_intra_kernel, POINTERS, const, dict(num_warps=2, num_stages=1, maxnreg=168))
ptx = k.asm["ptx"]
print(regs)
for pat in ("cvt.rna.tf32", "mma.sync.aligned.m16n8k8.row.col.f32.tf32", "mma.sync.aligned.m16n8k16"):
    print(pat, len(re.findall(re.escape(pat), ptx)))
