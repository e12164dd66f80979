"""Stage 1 compiles for sm_90 (offline, no GPU) at the constexpr combinations the launcher and the GPU
tests use: head dims 16-256, the three gates (anchored diagonal on / off), varlen, GVA, no L2 norm,
fp32 inputs, the alternative configs; prints registers and spills per combination. Run from the
repository root: PYTHONPATH=$PWD python3 benchmarks/results/cpu_checks_20261202_s35/stage1_compile_sweep.py"""
import itertools
import os
import sys

import triton.language as tl

sys.path.insert(0, os.path.join(os.getcwd(), "benchmarks", "tools"))
from sm90_compile import compile_sm90  # noqa: E402

from kimiops.kda.kernels import chunk_intra as ci  # noqa: E402

cfg = ci.INTRA_CONFIG
fails = 0
for K, gate, varlen, gva, l2, dtype in itertools.product((16, 64, 128, 256), (0, 1, 2), (False, True), (1, 2),
                                                         (True, False), ("bf16", "fp32")):
    if (K != 128 and (gva == 2 or not l2 or dtype == "fp32")) or (varlen and (gva == 2 or dtype == "fp32")):
        continue  # keep the sweep small: the other axes at K = 128 only
    ptr = {n: f"*{dtype}" for n in ("q", "k", "g", "beta")}
    ptr.update({"A_log": "*fp32", "dt_bias": "*fp32", "cu_seqlens": "*i32", "w_out": "*fp16", "tb_out": "*fp32",
                "qg_out": "*fp16", "kg_out": "*fp16", "aqk_out": "*fp16", "gc_out": "*fp32", "chain_done": "*i32"})
    BK = min(cfg["BK"], K)
    const = dict(H=32 // gva, HV=32, K=K, C=32, BC=16, BK=BK, BK2=min(cfg["BK2"], K), GATE=gate, HAS_A=gate != 0,
                 HAS_DT_BIAS=gate != 0, USE_L2NORM=l2, USE_BETA_SIGMOID=True, NEG_EIGVAL=False, IS_VARLEN=varlen,
                 LOG_N=3 if varlen else 1, DOT_DT=tl.float16, INV_PREC="tf32", LOOP_STAGES=cfg["loop_stages"], ABL=0,
                 STASH_G=gate != 0 and cfg["stash_g"], DIAG_ANCHOR=gate == 2, PDL=0)
    try:
        _, regs = compile_sm90(ci.chunk_intra_kernel, ptr, const,
                               dict(num_warps=cfg["num_warps"], num_stages=cfg["num_stages"], maxnreg=cfg["maxnreg"]))
        status = regs
    except Exception as e:  # noqa: BLE001 - report every failing combination
        fails += 1
        status = f"FAILED {type(e).__name__}: {str(e).splitlines()[0][:120]}"
    print(f"K={K:3d} gate={gate} varlen={varlen!s:5} HV/H={gva} l2={l2!s:5} {dtype}: {status}", flush=True)
for alt in ci.INTRA_CANDIDATES:
    c = dict(cfg, **alt)
    ptr = {n: "*bf16" for n in ("q", "k", "g", "beta")}
    ptr.update({"A_log": "*fp32", "dt_bias": "*fp32", "cu_seqlens": "*i32", "w_out": "*fp16", "tb_out": "*fp32",
                "qg_out": "*fp16", "kg_out": "*fp16", "aqk_out": "*fp16", "gc_out": "*fp32", "chain_done": "*i32"})
    const = dict(H=32, HV=32, K=128, C=32, BC=16, BK=c["BK"], BK2=c.get("BK2", c["BK"]), GATE=1, HAS_A=True,
                 HAS_DT_BIAS=True, USE_L2NORM=True, USE_BETA_SIGMOID=True, NEG_EIGVAL=False, IS_VARLEN=False, LOG_N=1,
                 DOT_DT=tl.float16, INV_PREC="tf32", LOOP_STAGES=c["loop_stages"], ABL=0, STASH_G=True, DIAG_ANCHOR=False,
                 PDL=0)
    try:
        _, regs = compile_sm90(ci.chunk_intra_kernel, ptr, const,
                               {k: c[k] for k in ("num_warps", "num_stages", "maxnreg") if k in c})
        status = regs
    except Exception as e:  # noqa: BLE001
        fails += 1
        status = f"FAILED {type(e).__name__}: {str(e).splitlines()[0][:120]}"
    print(f"candidate {alt}: {status}", flush=True)
print(f"{fails} failed")
sys.exit(1 if fails else 0)
