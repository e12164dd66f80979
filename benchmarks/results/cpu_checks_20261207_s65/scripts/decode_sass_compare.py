"""Sixty-fifth session: the decode kernel's sm_90 SASS (offline, ``kimiops.testing.offline_sm90``) for every tile
config of both tables (batch mode and the cu_seqlens form, N = 1..256), head dims 16-128, both state layouts, one
file per variant under the directory given, so two trees' builds can be compared file by file. SASS carries no
source line numbers, so only code changes show. (The fifty-sixth session's script did batch mode alone.)

    PYTHONPATH=<tree> python3 benchmarks/results/cpu_checks_20261207_s65/scripts/decode_sass_compare.py OUT_DIR
"""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "../../../tools"))
from sm90_compile import sass_text  # noqa: E402

import kimiops  # noqa: E402
from kimiops.launch import compiling_in_background  # noqa: E402
from kimiops.testing import offline_sm90  # noqa: E402

offline_sm90()
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
                    name = f"dim{dim}_vfirst{int(v_first)}_varlen{int(varlen)}_N{N}_w{k.metadata.num_warps}.sass"
                    sass = sass_text(k.asm["cubin"])
                    with open(os.path.join(out_dir, name), "w") as f:
                        f.write("\n".join(sass))
                    print(name, len(sass), flush=True)
