"""Does a misaligned q change chunk_kda's bits on main's full path? B1 T in (200, 4096), H=4, D=128,
softplus gate; KIMIOPS_DEBUG=1 so no shortcut is involved."""
import os
os.environ["KIMIOPS_DEBUG"] = "1"
import torch
import kimiops
from kimiops.kda.kernels import chunk

gen = torch.Generator(device="cuda").manual_seed(11)
H, D = 4, 128
for T in (200, 4096):
    A_log = torch.log(torch.rand(H, device="cuda", generator=gen) * 15 + 1)
    dt = torch.randn(H * D, device="cuda", generator=gen) * 0.5
    q, k, v, g = (torch.randn(1, T, H, D, device="cuda", generator=gen, dtype=torch.bfloat16) for _ in range(4))
    beta = torch.randn(1, T, H, device="cuda", generator=gen, dtype=torch.bfloat16)
    buf = torch.empty(q.numel() + 1, device="cuda", dtype=torch.bfloat16)
    q_odd = buf[1:].view(q.shape)
    q_odd.copy_(q)
    s0 = torch.randn(1, H, D, D, device="cuda", generator=gen) * 0.1
    res = []
    for qq in (q, q_odd, q, q_odd):
        o, s = kimiops.chunk_kda(qq, k, v, g, beta, initial_state=s0.clone(), output_final_state=True,
                                 use_qk_l2norm_in_kernel=True, use_gate_in_kernel=True,
                                 use_beta_sigmoid_in_kernel=True, A_log=A_log, dt_bias=dt)
        res.append((o, s))
    same_aligned = torch.equal(res[0][0], res[2][0]) and torch.equal(res[0][1], res[2][1])
    same_odd = torch.equal(res[1][0], res[3][0]) and torch.equal(res[1][1], res[3][1])
    eq = torch.equal(res[0][0], res[1][0]), torch.equal(res[0][1], res[1][1])
    d_o = (res[0][0].float() - res[1][0].float()).abs().max().item()
    d_s = (res[0][1] - res[1][1]).abs().max().item()
    print(f"T={T}: repeat aligned equal {same_aligned}, repeat misaligned equal {same_odd}; "
          f"aligned vs misaligned: o equal {eq[0]} (max |diff| {d_o:.3g}), state equal {eq[1]} (max |diff| {d_s:.3g})")
