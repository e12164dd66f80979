"""Fifty-sixth session: the randomized call after which racecheck reported WAW hazards in the decode kernel's
o store (fuzz_public_ops seed 57, call [1]: K = V = 32, H = 1, HV = 2, bf16, B = 2, T = 2, lower-bound gate with
A_log, beta sigmoid, dense fp32 state) and call [2] (K = V = 16, fp16, B = 1, T = 3). Each runs once (for
racecheck), then 1000 times: do o and the state repeat their bits?"""
import torch

import kimiops

torch.manual_seed(0)
for name, (B, T, H, HV, K, V, dt) in {"call1": (2, 2, 1, 2, 32, 32, torch.bfloat16),
                                      "call2": (1, 3, 1, 1, 16, 16, torch.float16)}.items():
    q = torch.randn(B, T, H, K, device="cuda", dtype=dt)
    k = torch.randn_like(q)
    v = torch.randn(B, T, HV, V, device="cuda", dtype=dt)
    g = torch.randn(B, T, HV, K, device="cuda")
    beta = torch.randn(B, T, HV, device="cuda", dtype=dt)
    h0 = torch.randn(B, HV, K, V, device="cuda")
    kw = dict(initial_state=h0, output_final_state=True, use_gate_in_kernel=True, use_beta_sigmoid_in_kernel=True,
              A_log=torch.zeros(HV, device="cuda", dtype=torch.float16), lower_bound=-3.88, scale=0.55,
              backend="triton")
    print(f"@@ {name} first call", flush=True)
    o0, s0 = kimiops.fused_recurrent_kda(q, k, v, g, beta, **kw)
    torch.cuda.synchronize()
    print(f"@@ {name} done", flush=True)
    same = all(torch.equal(o, o0) and torch.equal(s, s0)
               for o, s in (kimiops.fused_recurrent_kda(q, k, v, g, beta, **kw) for _ in range(1000)))
    print(f"@@ {name}: bits of o and the state repeat over 1000 calls: {same}", flush=True)
