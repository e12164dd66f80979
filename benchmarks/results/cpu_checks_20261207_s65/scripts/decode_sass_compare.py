"""Sixty-fifth session (the fifty-sixth session's script with the cu_seqlens form added): the decode kernel's sm_90
SASS (offline, driver stubbed) for every tile config of both tables (batch mode and cu_seqlens), head dims 16-128,
both state layouts, written one file per variant under the directory given, so two trees' builds
can be compared (``diff -r``). SASS carries no source line numbers, so only code changes show.

    PYTHONPATH=<tree> python3 decode_sass_compare.py OUT_DIR"""
import os
import subprocess
import sys
import tempfile

import torch
import triton
from triton.backends.compiler import GPUTarget

import kimiops
from kimiops.kda import runner
from kimiops.kda.kernels import chunk, recurrent
from kimiops.launch import compiling_in_background


class Sm90Offline:
    def get_current_target(self):
        return GPUTarget("cuda", 90, 32)

    def get_current_device(self):
        return 0

    def get_current_stream(self, device=None):
        return 0


triton.runtime.driver.set_active(Sm90Offline())
torch._C._cuda_getDevice = lambda: 0
chunk.supports_pdl = recurrent.supports_pdl = lambda device: True
runner.kda_backend = lambda *a, **k: "triton"
nvdisasm = os.path.join(os.path.dirname(triton.__file__), "backends/nvidia/bin/nvdisasm")
out_dir = sys.argv[1]
os.makedirs(out_dir, exist_ok=True)
H = 32
for dim in (16, 32, 64, 128):
    for v_first in (True, False):
        for varlen in (False, True):
            for N in (1, 2, 4, 8, 64, 256):  # every row of both tables
                shape = (1, N) if varlen else (N, 1)
                q = torch.randn(*shape, H, dim, dtype=torch.bfloat16)
                with compiling_in_background(1) as mode:
                    kimiops.fused_recurrent_kda(q, q, q, q, torch.randn(*shape, H, dtype=torch.bfloat16),
                                                initial_state=torch.zeros(N, H, dim, dim),
                                                use_qk_l2norm_in_kernel=True, use_gate_in_kernel=True,
                                                use_beta_sigmoid_in_kernel=True, A_log=torch.zeros(H),
                                                dt_bias=torch.zeros(H * dim), state_v_first=v_first,
                                                cu_seqlens=torch.arange(N + 1, dtype=torch.int32) if varlen else None,
                                                ssm_state_indices=torch.arange(N, dtype=torch.int32))
                for fk in mode.future_kernels.values():
                    k = fk.future.result()
                    with tempfile.NamedTemporaryFile(suffix=".cubin", delete=False) as f:
                        f.write(k.asm["cubin"])
                    sass = subprocess.run([nvdisasm, "-c", f.name], capture_output=True, text=True).stdout
                    os.unlink(f.name)
                    name = f"dim{dim}_vfirst{int(v_first)}_varlen{int(varlen)}_N{N}_w{k.metadata.num_warps}.sass"
                    with open(os.path.join(out_dir, name), "w") as f:
                        f.write(sass)
                    print(name, len(sass.splitlines()), flush=True)
