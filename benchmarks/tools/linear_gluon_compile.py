"""Offline sm_90 compile of the Gluon linear (``kimiops/gemm/skinny_gluon.py``): checks that it builds,
and reports shared memory, registers and spills per (block_k, stages), with and without split-K.
No GPU needed.

    PYTHONPATH=$PWD python3 benchmarks/tools/linear_gluon_compile.py
"""
import os
import re
import subprocess
import tempfile

import torch
import triton
from triton._C.libtriton import native_specialize_impl
from triton.backends.compiler import GPUTarget
from triton.backends.nvidia.compiler import CUDABackend
from triton.experimental.gluon import language as gl
from triton.experimental.gluon._runtime import GluonASTSource
from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

from kimiops.gemm import skinny_gluon as sg


def desc_type(shape, block, layout):
    return native_specialize_impl(CUDABackend, TensorDescriptor.from_tensor(torch.empty(shape, dtype=torch.bfloat16),
                                                                            block, layout), False, True, True)[0]


def main():
    ptxas = os.path.join(os.path.dirname(triton.__file__), "backends/nvidia/bin/ptxas")
    for block_k in (128, 256):
        for stages in (2, 3, 4, 5, 6):
            for out, split in (("*bf16", False), ("*fp32", True)):
                layout = lambda rows: gl.NVMMASharedLayout.get_default_for([rows, block_k], gl.bfloat16)  # noqa: E731
                sig = dict(w_desc=desc_type((256, 2048), [sg.BLOCK_N, block_k], layout(sg.BLOCK_N)),
                           x_desc=desc_type((4, 2048), [16, block_k], layout(16)),
                           b_ptr="*bf16", y_ptr=out, part_ptr="*fp32", count_ptr="*i32", M="i32", N="i32", K="i32",
                           K_SPLIT="i32", stride_ym="i32")
                const = dict(HAS_BIAS=True, SPLIT=split, BLOCK_K=block_k, STAGES=stages,
                             CHUNK_TILES=max(1, sg.CHUNK_K // block_k), PDL=True, REDUCE_UNROLL=4)
                sig.update({k: "constexpr" for k in const})
                try:
                    k = triton.compile(GluonASTSource(sg._gluon_linear_kernel, sig, const),
                                       target=GPUTarget("cuda", 90, 32), options=dict(num_warps=4))
                except Exception as exc:  # noqa: BLE001 - reported per variant
                    print(f"block_k {block_k} stages {stages} out {out} split {split}: FAILED {type(exc).__name__}: {str(exc)[:600]}")
                    continue
                ptx = k.asm["ptx"]
                with tempfile.NamedTemporaryFile("w", suffix=".ptx", delete=False) as f:
                    f.write(ptx)
                r = subprocess.run([ptxas, "-arch=sm_90a", "-v", f.name, "-o", "/dev/null"], capture_output=True, text=True)
                os.unlink(f.name)
                stats = " ".join(re.findall(r"Used \d+ registers|\d+ bytes spill stores", r.stderr))
                print(f"block_k {block_k} stages {stages} out {out} split {split}: shared {k.metadata.shared} B; {stats}; "
                      f"tma loads {len(re.findall('cp.async.bulk.tensor', ptx))}, wgmma {len(re.findall('wgmma.mma_async', ptx))}, "
                      f"griddepcontrol {len(re.findall('griddepcontrol', ptx))}", flush=True)


if __name__ == "__main__":
    main()
