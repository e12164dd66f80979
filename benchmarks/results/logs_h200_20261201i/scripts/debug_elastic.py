"""Why do elastic prefill replays decline? The GPU test's pool case, printing each check."""
import torch

import kimiops
import kimiops.launch as fl
from kimiops.kda import runner
from kimiops.kda.kernels import chunk

orig = chunk.ElasticPrefill.__call__


def traced(self, q, k, v, g, beta, h0, h0_indices, ht, ht_indices, cu_seqlens, A_log, dt_bias):
    T, N = q.shape[1], cu_seqlens.shape[0] - 1
    NC = T // chunk.CHUNK_SIZE + N
    why = []
    if not fl.FAST_LAUNCH or torch._C._cuda_getDevice() != self.device or not fl.no_launch_hooks():
        why.append("fast/device/hooks")
    if torch._C._cuda_getCurrentRawStream(self.device) != self.stream:
        why.append("stream")
    if NC > self.slot_cap or N > self.seq_cap:
        why.append(f"cap NC {NC}/{self.slot_cap} N {N}/{self.seq_cap}")
    lay = chunk.elastic_layout(T, N, self.HV, self.K)
    if lay != self.layout:
        why.append(f"layout {lay} vs {self.layout}")
    for grid_of, grid, template, from_call, elastic, ints, const, variants in self.launches:
        values = list(template)
        for pos, name in elastic:
            values[pos] = chunk._ELASTIC_VALUES[name](T, N, NC, self.HV)
        key = chunk._elastic_variant(values, ints, const)
        if key not in variants:
            why.append(f"variant {grid_of} {key} not in {list(variants)}")
    out = orig(self, q, k, v, g, beta, h0, h0_indices, ht, ht_indices, cu_seqlens, A_log, dt_bias)
    print(f"T={T} N={N}: {'replayed' if out is not None else 'declined'} {why}", flush=True)
    return out


chunk.ElasticPrefill.__call__ = traced
gen = torch.Generator(device="cuda").manual_seed(12)
H, HV, D = 2, 4, 128
A_log = torch.log(torch.rand(HV, device="cuda", generator=gen) * 15 + 1)
dt = torch.randn(HV * D, device="cuda", generator=gen) * 0.5
pool = torch.randn(6, HV, D, D, device="cuda", generator=gen) * 0.1
for lens in [[100, 37], [64, 0, 90], [7], [160, 96], [5, 200, 31, 9, 2], [48], [80, 80], [3000], [700, 650, 11],
             [80, 80, 3], [81, 80]]:
    T = sum(lens)
    cu = torch.tensor([0, *torch.tensor(lens).cumsum(0).tolist()], dtype=torch.int32, device="cuda")
    q, k = (torch.randn(1, T, H, D, device="cuda", dtype=torch.bfloat16) for _ in range(2))
    v, g = (torch.randn(1, T, HV, D, device="cuda", dtype=torch.bfloat16) for _ in range(2))
    beta = torch.randn(1, T, HV, device="cuda", dtype=torch.bfloat16)
    idx = torch.tensor([5, -1, 0, 3, 1][:len(lens)], dtype=torch.int32, device="cuda")
    kimiops.chunk_kda(q, k, v, g, beta, initial_state=pool, initial_state_indices=idx, output_final_state=True,
                      use_qk_l2norm_in_kernel=True, use_gate_in_kernel=True, use_beta_sigmoid_in_kernel=True,
                      A_log=A_log, dt_bias=dt, cu_seqlens=cu, state_v_first=True)
    print(lens, "elastic entries:", {len(e) for e in runner._elastic.values()}, flush=True)
