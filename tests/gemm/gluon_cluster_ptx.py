"""Offline sm_90 PTX of the Gluon linear's cluster hand-off, for ``test_linear.py`` (no GPU needed).

Run as a script in a process of its own: once Triton's interpreter has run a kernel in a process (the
CPU tests do), compiling a Gluon kernel there fails, so the test cannot compile in its own process.

    python3 tests/gemm/gluon_cluster_ptx.py BLOCK_M,BLOCK_K,STAGES,CLUSTER [...]

prints a JSON object mapping each argument to the kernel's PTX (bf16 inputs and output, bias on).
"""
import json
import sys

import torch
import triton
from triton._C.libtriton import native_specialize_impl
from triton.backends.compiler import GPUTarget
from triton.backends.nvidia.compiler import CUDABackend
from triton.experimental.gluon import language as gl
from triton.experimental.gluon._runtime import GluonASTSource
from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

from kimiops.gemm import skinny_gluon


def _desc(rows: int, cols: int, block: list[int]):
    layout = gl.NVMMASharedLayout.get_default_for(block, gl.bfloat16)
    t = TensorDescriptor.from_tensor(torch.empty(rows, cols, dtype=torch.bfloat16), block, layout)
    return native_specialize_impl(CUDABackend, t, False, True, True)[0]


def cluster_ptx(block_m: int, block_k: int, stages: int, cluster: int) -> str:
    const = dict(HAS_BIAS=True, SPLIT=True, BLOCK_K=block_k, STAGES=stages, CHUNK_TILES=max(1, 1024 // block_k),
                 PDL=True, REDUCE_UNROLL=1, CLUSTER=cluster)
    sig = dict(w_desc=_desc(256, 2048, [skinny_gluon.BLOCK_N, block_k]), x_desc=_desc(4, 2048, [block_m, block_k]),
               b_ptr="*bf16", y_ptr="*bf16", part_ptr="*fp32", count_ptr="*i32", M="i32", N="i32", K="i32",
               K_SPLIT="i32", stride_ym="i32", **{k: "constexpr" for k in const})
    kernel = triton.compile(GluonASTSource(skinny_gluon._gluon_linear_kernel, sig, const),
                            target=GPUTarget("cuda", 90, 32), options=dict(num_warps=4))
    return kernel.asm["ptx"]


if __name__ == "__main__":
    print(json.dumps({arg: cluster_ptx(*map(int, arg.split(","))) for arg in sys.argv[1:]}))
