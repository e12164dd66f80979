"""How many (chunk of 32, value head) programs the exp/mild-anchor check would send to the anchored
diagonal (every step's log decay >= -5; the softplus gate read with its 2% margin, >= -4.9), for the
gate distributions of bench_kda_prefill.py (B1 T8192, HV = 32, K = 128) and of the tests'
Kimi-like softplus gates (exp(A_log) from 1 to 200, logits x 6). CPU, fp32.

    python3 benchmarks/results/cpu_checks_20261202_s36/mild_anchor_pass_rates.py
"""
import torch

T, HV, K, C = 8192, 32, 128, 32
gen = torch.Generator().manual_seed(0)


def rate(step, bound):
    ok = (step.view(T // C, C, HV, K) >= bound).all(dim=3).all(dim=1)   # [chunks, HV]
    return ok.float().mean().item(), ok.float().mean(0)


g = torch.nn.functional.logsigmoid(torch.randn(T, HV, K, generator=gen) + 2.0)
print(f"bench 'g' (logsigmoid(N(0,1) + 2)): {rate(g, -5.0)[0]:.3f} of programs pass")
x = torch.randn(T, HV, K, generator=gen)
A = torch.rand(HV, generator=gen) * 15 + 1
dt = torch.randn(HV * K, generator=gen) * 0.5
step = -A[:, None] * torch.nn.functional.softplus(x + dt.view(HV, K))
r, per_head = rate(step, -4.9)
print(f"bench 'gate' (softplus, exp(A_log) in [1, 16]): {r:.3f} of programs pass; heads passing in more "
      f"than half their chunks: {int((per_head > 0.5).sum())} of {HV} (their exp(A_log): "
      f"{[round(a, 2) for a in A[per_head > 0.5].tolist()]})")
A = torch.linspace(1.0, 200.0, HV)
step = -A[:, None] * torch.nn.functional.softplus(torch.randn(T, HV, K, generator=gen) * 6.0)
print(f"tests' Kimi-like softplus (exp(A_log) 1..200, logits x 6): {rate(step, -4.9)[0]:.3f} of programs pass")
