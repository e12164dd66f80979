"""Fifty-sixth session: which decode configs racecheck reports WAW hazards for (run under compute-sanitizer
--tool racecheck). One public fused_recurrent_kda call per (tile config, layout, dims, tokens), a marker line
before each, a sync after; then, per call, whether the output's bits repeat over 20 calls (the pool restored
from a copy each time) and the compiled variant's PTX around o's store ($OUT/decode_*.ptx)."""
import os
import sys

import torch

import kimiops
from kimiops.kda.kernels import recurrent

torch.manual_seed(0)
out_dir = os.environ.get("OUT", "/tmp")
H = 4
for dim in (64, 128):
    for v_first in (True, False):
        for N, T in ((1, 1), (8, 1), (16, 1), (4, 3)):
            q = torch.randn(1, N * T, H, dim, device="cuda", dtype=torch.bfloat16)
            k = torch.randn_like(q)
            v = torch.randn_like(q)
            g = torch.randn_like(q)
            beta = torch.randn(1, N * T, H, device="cuda", dtype=torch.bfloat16)
            cu = torch.arange(0, N * T + 1, T, device="cuda", dtype=torch.int32)
            pool = torch.randn(N + 2, H, dim, dim, device="cuda") * 0.1
            idx = torch.arange(1, N + 1, device="cuda", dtype=torch.int32)
            kw = dict(initial_state=None, use_qk_l2norm_in_kernel=True, use_gate_in_kernel=True,
                      use_beta_sigmoid_in_kernel=True, A_log=torch.zeros(H, device="cuda"),
                      dt_bias=torch.zeros(H * dim, device="cuda"), state_v_first=v_first, cu_seqlens=cu,
                      ssm_state_indices=idx)
            cfg = recurrent.config_for(N * H, True)
            print(f"@@ call dim {dim} v_first {v_first} N {N} T {T} config {cfg}", flush=True)
            p0 = pool.clone()
            o, _ = kimiops.fused_recurrent_kda(q, k, v, g, beta, **{**kw, "initial_state": p0})
            torch.cuda.synchronize()
            print(f"@@ done", flush=True)
            same = True
            for _ in range(20):
                p1 = pool.clone()
                o1, _ = kimiops.fused_recurrent_kda(q, k, v, g, beta, **{**kw, "initial_state": p1})
                same &= torch.equal(o1, o) and torch.equal(p1, p0)
            torch.cuda.synchronize()
            print(f"@@ bits repeat over 20 calls: {same}", flush=True)
for key, ck in recurrent._recurrent_kda_fwd_kernel.device_caches[0][0].items():
    name = f"{out_dir}/decode_{ck.metadata.num_warps}w_{abs(hash(key)) % 100000}.ptx"
    with open(name, "w") as f:
        f.write(ck.asm["ptx"])
print("ptx written", file=sys.stderr)
