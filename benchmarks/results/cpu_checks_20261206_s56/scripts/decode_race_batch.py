"""Fifty-sixth session: batch-mode decode (no cu_seqlens, one token per request) at 32 heads, head dims 64 and
128, both state layouts, N = 1, 2, 4, 8, 64 (every row of the batch config table but the last), one call each
under racecheck, a marker line before each."""
import torch

import kimiops
from kimiops.kda.kernels import recurrent

torch.manual_seed(0)
H = 32
for dim in (64, 128):
    for v_first in (True, False):
        for N in (1, 2, 4, 8, 64):
            q = torch.randn(N, 1, H, dim, device="cuda", dtype=torch.bfloat16)
            k, v, g = torch.randn_like(q), torch.randn_like(q), torch.randn_like(q)
            beta = torch.randn(N, 1, H, device="cuda", dtype=torch.bfloat16)
            pool = torch.randn(N + 1, H, dim, dim, device="cuda") * 0.1
            idx = torch.arange(1, N + 1, device="cuda", dtype=torch.int32)
            print(f"@@ dim {dim} v_first {v_first} N {N} config {recurrent.config_for(N * H, False)}", flush=True)
            kimiops.fused_recurrent_kda(q, k, v, g, beta, initial_state=pool, use_qk_l2norm_in_kernel=True,
                                        use_gate_in_kernel=True, use_beta_sigmoid_in_kernel=True,
                                        A_log=torch.zeros(H, device="cuda"), dt_bias=torch.zeros(H * dim, device="cuda"),
                                        state_v_first=v_first, ssm_state_indices=idx)
            torch.cuda.synchronize()
print("@@ end", flush=True)
