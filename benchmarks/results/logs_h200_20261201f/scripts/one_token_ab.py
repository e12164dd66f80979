"""Packed decode (batch mode, one token per request) with the kernel's one-token specialization off and on
(variant O, patch_one.py: bounds known at compile time, no next-token loads; switched by KIMIOPS_ONE_TOKEN
at launch), against vLLM 0.33's packed-decode kernel; CUDA-graph medians of 20 calls, best of 3 interleaved
rounds, same slots and cold. Run with the patched tree first on sys.path.

    PYTHONPATH=<tree>:$PWD/benchmarks python3 one_token_ab.py .exp/vllm_kda
"""
import os
import sys

import torch

from kimiops.kda.kernels import recurrent as rec  # first: the patched tree
import kimiops  # noqa: E402
from bench_kda_decode import GRAPH_CALLS  # noqa: E402
from bench_vllm_kda import H, K, V, gate_params, graph_us, load_vllm  # noqa: E402

vk, source = load_vllm(sys.argv[1])
print("kernel", rec.__file__, "; vLLM kernels from", source)
gen = torch.Generator(device="cuda").manual_seed(0)
bf = torch.bfloat16
A_log, dt_bias = gate_params(gen)
NS = (1, 2, 8, 64)
slots = 1 + GRAPH_CALLS * max(NS)
pool = torch.randn(slots, H, V, K, device="cuda", generator=gen) * 0.1


def with_env(value, fn):
    def call():
        os.environ["KIMIOPS_ONE_TOKEN"] = value
        return fn()
    return call


for N in NS:
    perm = 1 + torch.randperm(slots - 1, device="cuda", generator=gen).to(torch.int32)
    sets = [perm[i * N:(i + 1) * N].contiguous() for i in range(GRAPH_CALLS)]
    mixed = torch.randn(N, 3 * H * K, device="cuda", generator=gen).to(bf)
    raw_g = torch.randn(1, N, H, K, device="cuda", generator=gen).to(bf)
    raw_beta = torch.randn(1, N, H, device="cuda", generator=gen).to(bf)
    rs = mixed.stride(0)
    q, k, v = (mixed.as_strided((N, 1, H, K), (rs, rs, K, 1), off * H * K) for off in range(3))

    def ours(idx, one):
        return with_env(one, lambda: kimiops.fused_recurrent_kda(
            q, k, v, raw_g.view(N, 1, H, K), raw_beta.view(N, 1, H), None, pool, use_qk_l2norm_in_kernel=True,
            use_gate_in_kernel=True, use_beta_sigmoid_in_kernel=True, A_log=A_log, dt_bias=dt_bias,
            state_v_first=True, ssm_state_indices=idx))

    saved = pool.clone()
    o0 = ours(sets[0], "0")()[0].clone()
    s0 = pool[sets[0].long()].clone()
    pool.copy_(saved)
    o1 = ours(sets[0], "1")()[0].clone()
    s1 = pool[sets[0].long()].clone()
    pool.copy_(saved)
    bits = bool(torch.equal(o0, o1) and torch.equal(s0, s1))
    fns = {"vllm": ([lambda: vk.fused_recurrent_kda_packed_decode(mixed, raw_g, raw_beta, A_log, dt_bias, None,
                                                                   pool, sets[0])] * GRAPH_CALLS,
                    [(lambda i=i: vk.fused_recurrent_kda_packed_decode(mixed, raw_g, raw_beta, A_log, dt_bias, None,
                                                                        pool, i)) for i in sets]),
           "loop": ([ours(sets[0], "0")] * GRAPH_CALLS, [ours(i, "0") for i in sets]),
           "one": ([ours(sets[0], "1")] * GRAPH_CALLS, [ours(i, "1") for i in sets])}
    best = {}
    for _ in range(3):
        for name, (same, cold) in fns.items():
            for tag, calls in (("", same), ("_cold", cold)):
                us = graph_us(calls)
                best[name + tag] = min(best.get(name + tag, us), us)
    os.environ["KIMIOPS_ONE_TOKEN"] = "0"
    print(f"N={N:>3}: " + "  ".join(f"{n} {best[n]:.2f}/{best[n + '_cold']:.2f}" for n in fns) +
          f"  (same slots / cold) bits equal {bits}", flush=True)
