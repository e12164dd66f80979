"""Run 6: public chunk_kda calls of one fixed-length sequence (no cu_seqlens, B = 1, as transformers'
Kimi-Linear calls it) with a new token count every call, elastic replay on / off alternating in one
process (extend_host_gpu.elastic_replay), 32 heads, softplus gate, output_final_state; median host
time until return, two rounds, and the GPU time of such calls."""
import torch

import extend_host_gpu as t
import kimiops
from kimiops.bench.timing import each_call_us, queued_gpu_us

H, K = 32, 128
gen = torch.Generator().manual_seed(0)
A_log = torch.log(torch.rand(H, generator=gen) * 15 + 1).cuda()
dt = (torch.randn(H * K, generator=gen) * 0.5).cuda()
used = set()


def calls(count, lo, hi):
    out = []
    while len(out) < count:
        T = int(torch.randint(lo, hi + 1, (1,), generator=gen))
        if T in used:
            continue
        used.add(T)
        q, k, v, g = (torch.randn(1, T, H, K, device="cuda").to(torch.bfloat16) for _ in range(4))
        beta = torch.randn(1, T, H, device="cuda").to(torch.bfloat16)
        out.append(lambda q=q, k=k, v=v, g=g, beta=beta: kimiops.chunk_kda(
            q, k, v, g, beta, use_qk_l2norm_in_kernel=True, use_gate_in_kernel=True, use_beta_sigmoid_in_kernel=True,
            A_log=A_log, dt_bias=dt, output_final_state=True))
    return out


print(f"torch.add_ until return {each_call_us([lambda: torch.zeros(16, device='cuda').add_(1)] * 200).until:.1f} us")
for lo, hi in ((64, 900), (1100, 4000)):
    for fn in calls(30, lo, hi):
        fn()
    print(f"one sequence of {lo}-{hi} tokens, 32 heads: GPU {queued_gpu_us(calls(20, lo, hi)):.1f} us", flush=True)
    for rnd in range(2):
        times = {}
        for mode in ("elastic replay", "without it"):
            with t.elastic_replay(mode == "elastic replay"):
                for fn in calls(15, lo, hi):
                    fn()
                times[mode] = each_call_us(calls(30, lo, hi)).until
        print(f"  round {rnd + 1}, until return: " + ", ".join(f"{m} {v:.1f} us" for m, v in times.items()), flush=True)
