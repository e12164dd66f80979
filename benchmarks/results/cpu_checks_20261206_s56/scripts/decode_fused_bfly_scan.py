"""Fifty-sixth session: which compiled decode variants fuse a product into the first cross-lane step of a
reduction (offline sm_90, driver stubbed). In PTX, an ``fma.rn.f32`` whose addend is the result of a
``shfl.sync.bfly`` makes the replicas of a reduced value differ in rounding (lane i adds the partner's rounded
product to its own exact one, the partner the other way round), so the copies that Triton's layout conversion
then writes to one shared-memory address differ: racecheck's WAW hazards of runs 10-13. Prints, per head dim,
state layout and tile config, how many such FMAs the kernel has."""
import pathlib
import re
import sys

import torch
import triton
from triton.backends.compiler import GPUTarget

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[4]))
import kimiops  # noqa: E402
from kimiops.kda import runner  # noqa: E402
from kimiops.kda.kernels import chunk, recurrent  # noqa: E402
from kimiops.launch import compiling_in_background  # noqa: E402


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


def fused_bfly(ptx: str) -> int:
    shfl = set(re.findall(r"shfl\.sync\.bfly\.b32\s+(%r\d+),", ptx))
    return sum(1 for m in re.finditer(r"fma\.rn\.f32\s+%r\d+, %r\d+, %r\d+, (%r\d+);", ptx) if m.group(1) in shfl)


H = 32
for dim in (16, 32, 64, 128):
    for v_first in (True, False):
        for N in (1, 2, 4):  # batch table rows: 1 warp BV 8, 4 warps BV 8, 2 warps BV 16
            q = torch.randn(N, 1, H, dim, dtype=torch.bfloat16)
            pool = torch.zeros(N, H, dim, dim)
            with compiling_in_background(1) as mode:
                kimiops.fused_recurrent_kda(q, q, q, q, torch.randn(N, 1, H, dtype=torch.bfloat16),
                                            initial_state=pool, use_qk_l2norm_in_kernel=True,
                                            use_gate_in_kernel=True, use_beta_sigmoid_in_kernel=True,
                                            A_log=torch.zeros(H), dt_bias=torch.zeros(H * dim), state_v_first=v_first,
                                            ssm_state_indices=torch.arange(N, dtype=torch.int32))
            for fk in mode.future_kernels.values():
                k = fk.future.result()
                print(f"dim {dim:3d} v_first {v_first!s:5} {recurrent.config_for(N * H, False)[:2]} "
                      f"warps {k.metadata.num_warps}: fma fed by a bfly shuffle: {fused_bfly(k.asm['ptx'])}", flush=True)
