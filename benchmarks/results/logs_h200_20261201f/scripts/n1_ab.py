"""N = 1 (and 2) decode: vLLM 0.33's packed-decode and speculative kernels against the kimiops decode
kernel at several tile configs, CUDA-graph medians of 20 calls, best of 3 interleaved rounds, same
slots in every call and cold (20 disjoint slot sets). Shapes of bench_vllm_kda.py.

    PYTHONPATH=$PWD:$PWD/benchmarks python3 n1_ab.py .exp/vllm_kda
"""
import sys

import torch

from bench_kda_decode import GRAPH_CALLS
from bench_vllm_kda import H, K, SPEC, V, best_us, gate_params, load_vllm
from kimiops.kda.kernels import recurrent as rec

vk, source = load_vllm(sys.argv[1])
print("vLLM kernels from", source)
gen = torch.Generator(device="cuda").manual_seed(0)
bf = torch.bfloat16
A_log, dt_bias = gate_params(gen)
slots = 1 + GRAPH_CALLS * SPEC * 2
pool = torch.randn(slots, H, V, K, device="cuda", generator=gen) * 0.1


def parse(text):
    head = text.rstrip("he")
    bv, nw = head.split("x")
    return int(bv), int(nw), "h" in text[len(head):], "e" in text[len(head):]


for N in (1, 2):
    perm = 1 + torch.randperm(slots - 1, device="cuda", generator=gen).to(torch.int32)
    sets = [perm[i * N:(i + 1) * N].contiguous() for i in range(GRAPH_CALLS)]
    mixed = torch.randn(N, 3 * H * K, device="cuda", generator=gen).to(bf)
    raw_g = torch.randn(1, N, H, K, device="cuda", generator=gen).to(bf)
    raw_beta = torch.randn(1, N, H, device="cuda", generator=gen).to(bf)
    rs = mixed.stride(0)
    q, k, v = (mixed.as_strided((N, 1, H, K), (rs, rs, K, 1), off * H * K) for off in range(3))
    gv, bv_ = raw_g.view(N, 1, H, K), raw_beta.view(N, 1, H)

    def ours(cfg, idx):
        return lambda: rec.recurrent_kda_fwd_config(
            cfg[0], cfg[1], q, k, v, gv, bv_, scale=K ** -0.5, cu_seqlens=None, h0=pool, h0_indices=idx, ht=pool,
            ht_indices=idx, state_v_first=True, use_qk_l2norm=True, use_beta_sigmoid=True, gate="softplus",
            A_log=A_log, dt_bias=dt_bias, lower_bound=None, skip_padded=True, stream_hints=cfg[2],
            early_inputs=cfg[3])

    fns = {"vllm": [lambda: vk.fused_recurrent_kda_packed_decode(mixed, raw_g, raw_beta, A_log, dt_bias, None, pool,
                                                                  sets[0])] * GRAPH_CALLS,
           "vllm_cold": [(lambda i=i: vk.fused_recurrent_kda_packed_decode(mixed, raw_g, raw_beta, A_log, dt_bias,
                                                                            None, pool, i)) for i in sets]}
    for name in ("8x1", "8x1e", "4x1", "4x1e", "16x2", "32x4", "32x4e", "8x4e"):
        cfg = parse(name)
        fns[name] = [ours(cfg, sets[0])] * GRAPH_CALLS
        fns[name + "_cold"] = [ours(cfg, i) for i in sets]
    t = best_us(fns, 3)
    print(f"packed N={N}: " + "  ".join(f"{n} {t[n]:.2f}/{t[n + '_cold']:.2f}" for n in fns if not n.endswith("_cold")),
          flush=True)

    # speculative decode, 4 tokens per request
    T = N * SPEC
    smixed = torch.randn(T, 3 * H * K, device="cuda", generator=gen).to(bf)
    sq, sk, sv = (x.unflatten(-1, (H, K)).unsqueeze(0) for x in smixed.split(H * K, dim=-1))
    sg = torch.randn(1, T, H, K, device="cuda", generator=gen).to(bf)
    sb = torch.randn(1, T, H, device="cuda", generator=gen).to(bf)
    cu = torch.arange(N + 1, dtype=torch.int32, device="cuda") * SPEC
    acc = torch.randint(1, SPEC + 1, (N,), dtype=torch.int32, device="cuda", generator=gen)
    idx2 = perm[:T].view(N, SPEC).contiguous()

    def ours_spec(cfg):
        return lambda: rec.recurrent_kda_fwd_config(
            cfg[0], cfg[1], sq, sk, sv, sg, sb, scale=K ** -0.5, cu_seqlens=cu, h0=pool, h0_indices=idx2, ht=pool,
            ht_indices=idx2, state_v_first=True, use_qk_l2norm=True, use_beta_sigmoid=True, gate="softplus",
            A_log=A_log, dt_bias=dt_bias, lower_bound=None, skip_padded=True, stream_hints=cfg[2],
            early_inputs=cfg[3], num_accepted=acc)

    fns = {"vllm": [lambda: vk.fused_recurrent_kda(sq, sk, sv, sg, sb, A_log, dt_bias, None, pool, cu, idx2,
                                                   num_accepted_tokens=acc)] * GRAPH_CALLS}
    for name in ("8x1", "4x1", "4x1e", "8x1e", "16x1", "8x2", "4x2", "16x2"):
        fns[name] = [ours_spec(parse(name))] * GRAPH_CALLS
    t = best_us(fns, 3)
    print(f"spec N={N}: " + "  ".join(f"{n} {t[n]:.2f}" for n in fns), flush=True)
