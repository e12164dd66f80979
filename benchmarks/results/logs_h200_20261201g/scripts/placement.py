"""N = 1 packed decode: does the time depend on where its small tensors and its pool slot lie?

Run 12 of logs_h200_20261201f timed the same SASS at 2.54 us in one process and 3.15 in another.
Here, in one process, one factor moves at a time while the others stay put: the pool slot, the
index tensor's address, the packed inputs' address, the output's address. Ours (batch mode, the
table's N = 1 config, 8x1) and vLLM 0.33's packed decode on the same tensors; CUDA-graph medians of
20 chained calls, best of 3 interleaved rounds.

    PYTHONPATH=$PWD:$PWD/benchmarks python3 placement.py .exp/vllm_kda
"""
import statistics
import sys

import torch

from bench_vllm_kda import H, K, V, gate_params, load_vllm
from kimiops.bench.timing import graph_us
from kimiops.kda.kernels import recurrent as rec

vk, source = load_vllm(sys.argv[1])
print("vLLM kernels from", source, flush=True)
gen = torch.Generator(device="cuda").manual_seed(0)
bf = torch.bfloat16
A_log, dt_bias = gate_params(gen)
pool = torch.randn(1281, H, V, K, device="cuda", generator=gen) * 0.1
idx_buf = torch.full((1 << 20,), 7, dtype=torch.int32, device="cuda")
in_buf = torch.randn(1 << 22, device="cuda", generator=gen).to(bf)
out_buf = torch.empty(1 << 22, device="cuda", dtype=bf)
W = 3 * H * K


def tensors(slot=7, idx_off=0, in_off=0, out_off=0):
    idx = idx_buf[idx_off:idx_off + 1]
    idx.fill_(slot)
    mixed = in_buf[in_off:in_off + W].view(1, W)
    raw_g = in_buf[in_off + W:in_off + W + H * K].view(1, 1, H, K)
    raw_beta = in_buf[in_off + W + H * K:in_off + W + H * K + H].view(1, 1, H)
    out = out_buf[out_off:out_off + H * V].view(1, 1, H, V)
    return idx, mixed, raw_g, raw_beta, out


def calls(t):
    idx, mixed, raw_g, raw_beta, out = t
    q, k, v = (mixed.as_strided((1, 1, H, K), (W, W, K, 1), mixed.storage_offset() + off * H * K) for off in range(3))

    def ours():
        return rec.recurrent_kda_fwd_config(
            8, 1, q, k, v, raw_g.view(1, 1, H, K), raw_beta.view(1, 1, H), scale=K ** -0.5, cu_seqlens=None, h0=pool,
            h0_indices=idx, ht=pool, ht_indices=idx, state_v_first=True, use_qk_l2norm=True, use_beta_sigmoid=True,
            gate="softplus", A_log=A_log, dt_bias=dt_bias, lower_bound=None, skip_padded=True, out=out)

    def vllm():
        return vk.fused_recurrent_kda_packed_decode(mixed, raw_g, raw_beta, A_log, dt_bias, None, pool, idx, out=out)

    return {"ours": ours, "vllm": vllm}


FACTORS = {
    "slot": [dict(slot=s) for s in (1, 2, 3, 5, 8, 13, 100, 333, 640, 1000, 1200, 1280)],
    "idx 128B steps": [dict(idx_off=32 * j) for j in range(12)],
    "idx 64KiB steps": [dict(idx_off=16384 * j) for j in range(12)],
    "inputs 512B steps": [dict(in_off=256 * j) for j in range(12)],
    "inputs 64KiB steps": [dict(in_off=32768 * j) for j in range(12)],
    "out 512B steps": [dict(out_off=256 * j) for j in range(12)],
    "out 64KiB steps": [dict(out_off=32768 * j) for j in range(12)],
}
for name, cases in FACTORS.items():
    res = {"ours": [], "vllm": []}
    for c in cases:
        fns = calls(tensors(**c))
        best = {}
        for _ in range(3):
            for who, fn in fns.items():
                us = graph_us([fn] * 20)
                best[who] = min(best.get(who, us), us)
        for who in res:
            res[who].append(best[who])
    for who, xs in res.items():
        print(f"{name:>20} {who:>5}: min {min(xs):.2f} median {statistics.median(xs):.2f} max {max(xs):.2f} | "
              + " ".join(f"{x:.2f}" for x in xs), flush=True)
