"""Offline sm_90 compile of the Gluon linear (1024x2048 tiling: block_k 256, 3 stages, split-K) with M
specialized to 1 and with M a runtime argument: PTX line and instruction counts side by side.

    PYTHONPATH=$PWD python3 benchmarks/results/logs_h200_20261130m/scripts/gluon_m_compare.py
"""
import re
import sys

sys.path.insert(0, "benchmarks/tools")
import linear_gluon_compile as c  # noqa: E402
import triton  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.experimental.gluon import language as gl  # noqa: E402
from triton.experimental.gluon._runtime import GluonASTSource  # noqa: E402

from kimiops.gemm import skinny_gluon as sg  # noqa: E402

for M in (1, "i32"):
    lay = lambda rows: gl.NVMMASharedLayout.get_default_for([rows, 256], gl.bfloat16)  # noqa: E731
    sig = dict(w_desc=c.desc_type((1024, 2048), [64, 256], lay(64)), x_desc=c.desc_type((8, 2048), [16, 256], lay(16)),
               b_ptr="*bf16", y_ptr="*bf16", part_ptr="*fp32", count_ptr="*i32", M="i32", N="i32", K="i32",
               K_SPLIT="i32", stride_ym="i32")
    const = dict(HAS_BIAS=False, SPLIT=True, BLOCK_K=256, STAGES=3, CHUNK_TILES=4, PDL=True, REDUCE_UNROLL=8)
    if M == 1:
        const["M"] = 1
    sig.update({k: "constexpr" for k in const})
    ptx = triton.compile(GluonASTSource(sg._gluon_linear_kernel, sig, const), target=GPUTarget("cuda", 90, 32),
                         options=dict(num_warps=4)).asm["ptx"]
    count = {name: len(re.findall(pat, ptx)) for name, pat in (
        ("ld.global", r"ld\.global"), ("st.global", r"st\.global"), ("bar.sync", r"bar\.sync|barrier\.sync"),
        ("st.shared", r"st\.shared"), ("ld.shared", r"ld\.shared"), ("wgmma", r"wgmma\.mma_async"),
        ("tma", r"cp\.async\.bulk\.tensor"))}
    print(f"M={M}: PTX lines {len(ptx.splitlines())}, " + ", ".join(f"{k} {v}" for k, v in count.items()))
