"""Offline sm_90 build of the Gluon state stage (``kimiops/kda/kernels/chunk_state_gluon.py``), no
GPU needed: for each feature set named, one line of JSON with the flags, shared memory, registers,
spilled bytes and, in the PTX, the wgmma instructions and waits. Run it without
``TRITON_INTERPRET`` (the interpreter replaces the kernel's helpers); the CPU tests call it so.

    python benchmarks/tools/state_gluon_compile.py [--stages 2] [--shapes 128x128,64x64] [FLAG,FLAG,... | none | all] ...
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

import torch
import triton
from triton._C.libtriton import native_specialize_impl
from triton.backends.compiler import GPUTarget
from triton.backends.nvidia.compiler import CUDABackend
from triton.experimental.gluon import language as gl
from triton.experimental.gluon._runtime import GluonASTSource

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from kimiops.kda.kernels import chunk_state_gluon as csg  # noqa: E402

FLAGS = ("STATE_V_FIRST", "HAS_H0", "HAS_H0_IDX", "HAS_HT", "HAS_HT_IDX", "IS_VARLEN", "ORDERED", "V_TILES_ADJACENT",
         "PARTED", "PDL")


def _desc(shape, block, dt, gdt):
    d = csg.TensorDescriptor.from_tensor(torch.empty(shape, dtype=dt), block,
                                         gl.NVMMASharedLayout.get_default_for(block, gdt))
    return native_specialize_impl(CUDABackend, d, False, True, True)[0]


def build(on: set, stages: int, K: int = 128, V: int = 128, C: int = 32, HV: int = 4) -> dict:
    f16 = (torch.float16, gl.float16)
    sig = dict(w_d=_desc((256, K), [C, K], *f16), qg_d=_desc((256, K), [C, K], *f16),
               kg_d=_desc((256, K), [C, K], *f16), tb_d=_desc((256, C), [C, C], torch.float32, gl.float32),
               aqk_d=_desc((256, C), [C, C], *f16), v_d=_desc((256, HV * V), [C, csg.BV], torch.bfloat16, gl.bfloat16),
               gc="*fp32", o="*bf16", h0="*fp32", h0_indices="*i32", ht="*fp32", ht_indices="*i32",
               cu_seqlens="*i32", order="*i32", carry="*fp32", rows_ck="i32", rows_cc="i32", s_gc="i64",
               s_carry="i64", T="i32", NT="i32", slot_lo="i32", slot_hi="i32")
    const = dict(HV=HV, K=K, V=V, C=C, STAGES=stages, **{f: f in on for f in FLAGS})
    sig.update({k: "constexpr" for k in const})
    kernel = triton.compile(GluonASTSource(csg.chunk_state_gluon_kernel, sig, const),
                            target=GPUTarget("cuda", 90, 32), options=dict(num_warps=4))
    ptx = kernel.asm["ptx"]
    ptxas = os.path.join(os.path.dirname(triton.__file__), "backends/nvidia/bin/ptxas")
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "k.ptx")
        with open(path, "w") as f:
            f.write(ptx)
        r = subprocess.run([ptxas, "-arch=sm_90a", "-v", path, "-o", os.path.join(d, "k.cubin")],
                           capture_output=True, text=True, check=True)
    return dict(flags=sorted(on), K=K, V=V, stages=stages, shared=kernel.metadata.shared,
                registers=int(re.search(r"Used (\d+) registers", r.stderr).group(1)),
                spill_bytes=int(re.search(r"(\d+) bytes spill stores", r.stderr).group(1)),
                wgmma=len(re.findall(r"wgmma\.mma_async", ptx)), waits=len(re.findall(r"wgmma\.wait_group", ptx)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--stages", type=int, default=2)
    ap.add_argument("--shapes", default="128x128", help="head dims KxV, comma-separated")
    ap.add_argument("sets", nargs="*", default=["none", "all"])
    args = ap.parse_args()
    for shape in args.shapes.split(","):
        K, V = (int(x) for x in shape.split("x"))
        for s in args.sets:
            on = set() if s == "none" else set(FLAGS) if s == "all" else set(s.split(","))
            unknown = on - set(FLAGS)
            if unknown:
                raise SystemExit(f"unknown flags {sorted(unknown)}; known: {FLAGS}")
            print(json.dumps(build(on, args.stages, K=K, V=V)), flush=True)


if __name__ == "__main__":
    main()
