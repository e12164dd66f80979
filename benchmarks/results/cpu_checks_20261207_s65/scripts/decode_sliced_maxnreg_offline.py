"""Sixty-fifth session: offline sm_90 compile of the tiles-per-program decode path in the cu_seqlens form (the bench
case: BV 8, one warp, 16 tiles, 3 stages, the cu_seqlens table's flags) under register caps: registers, spill
stores, SASS instructions, and where the first local load or store (spill) falls in the SASS listing against the
last async copy (LDGSTS): spills after it are the fallback's (the token loop), not the path's.

    PYTHONPATH=$PWD python3 benchmarks/results/cpu_checks_20261207_s65/scripts/decode_sliced_maxnreg_offline.py
"""
import os
import re
import subprocess
import sys
import tempfile

import triton

sys.path.insert(0, "benchmarks/tools")  # run from the repository root
from sm90_compile import compile_sm90, sass_instruction_count  # noqa: E402

from kimiops.kda.kernels import recurrent as rec  # noqa: E402
POINTERS = {n: "*bf16" for n in ("q", "k", "v", "g", "beta", "o")}
POINTERS.update({"h0": "*fp32", "ht": "*fp32", "h0_idx": "*i32", "ht_idx": "*i32", "cu_seqlens": "*i32",
                 "A_log": "*fp32", "dt_bias": "*fp32", "num_acc": "*i32", "parent": "*i32"})
K = V = 128
HV = 32
nvdisasm = os.path.join(os.path.dirname(triton.__file__), "backends/nvidia/bin/nvdisasm")
for cap in (None, 96, 80, 72, 64):
    const = dict(HV=HV, G=1, K=K, V=V, BK=K, BV=8, NV=16, S0_SLOT=HV * V * K, S0_HEAD=V * K,
                 ST_SLOT=HV * V * K, ST_HEAD=V * K, V_FIRST=True, IS_VARLEN=True, HAS_H0=True, HAS_H0_IDX=True,
                 HAS_HT=True, HAS_HT_IDX=True, INPLACE=True, SKIP_PADDED=True, USE_QK_L2NORM=True,
                 USE_BETA_SIGMOID=True, USE_GATE=True, USE_LOWER_BOUND=False, HAS_A=True, HAS_DT_BIAS=True,
                 EVEN_K=True, EVEN_V=True, PDL=True, STREAM_HINTS=True, NEG_EIGVAL=False, SPEC=False,
                 HAS_NUM_ACC=False, STEPS=0, ST_ROW=0, HAS_PARENT=False,
                 EARLY_INPUTS=False, WAIT_FIRST=False, PAD_SLOT=-1, NS=16, NS_STAGES=3)
    opts = dict(num_warps=1, num_stages=1)
    if cap:
        opts["maxnreg"] = cap
    k, regs = compile_sm90(rec._recurrent_kda_fwd_kernel, POINTERS, const, opts)
    with tempfile.NamedTemporaryFile(suffix=".cubin", delete=False) as f:
        f.write(k.asm["cubin"])
    sass = subprocess.run([nvdisasm, "-c", f.name], capture_output=True, text=True).stdout
    lines = sass.splitlines()
    spills = [i for i, l in enumerate(lines) if re.search(r"\b(STL|LDL)\b", l)]
    ldgsts = [i for i, l in enumerate(lines) if "LDGSTS" in l]
    os.unlink(f.name)
    print(f"maxnreg={cap}: {regs.strip()}; SASS {sass_instruction_count(k.asm['cubin'])}; local loads/stores: "
          f"{len(spills)}, first at listing line {spills[0] if spills else '-'}; last LDGSTS at line {ldgsts[-1]}",
          flush=True)
