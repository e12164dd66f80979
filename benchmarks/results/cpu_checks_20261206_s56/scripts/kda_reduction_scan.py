"""Fifty-sixth session: tests/kda/decode_reduction_ptx.py's check over every KDA kernel a range of calls
compiles (offline sm_90, ``kimiops.testing.offline_sm90``): prefill at head dims 16-256 in one part, in
pipelined parts and in segments, the three gate modes, both state layouts, and decode over ``cu_seqlens``
and in batch mode. Prints, per compiled variant, ``[stores, fused]``: unpredicated shared-memory stores of
butterfly-reduced values, and FMAs fed by a shuffle inside those reductions (copies that differ by lane)."""
import collections
import pathlib
import sys

import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[4]))
import kimiops  # noqa: E402
from kimiops.launch import compiling_in_background  # noqa: E402
from kimiops.testing import offline_sm90  # noqa: E402
from tests.kda.decode_reduction_ptx import reduction_stores  # noqa: E402

offline_sm90()
bf = torch.bfloat16
gates = {"g": {}, "softplus": dict(use_gate_in_kernel=True), "lower_bound": dict(use_gate_in_kernel=True,
                                                                                 lower_bound=-5.0)}
seen = collections.Counter()
bad = []


def scan(label, call):
    with compiling_in_background(1) as mode:
        call()
    for fk in mode.future_kernels.values():
        k = fk.future.result()
        stores, fused = reduction_stores(k.asm["ptx"])
        seen[k.name] += 1
        print(f"{label:58s} {k.name:28s} warps {k.metadata.num_warps}: stores {stores}, fused {fused}", flush=True)
        if fused:
            bad.append((label, k.name))


for dim in (16, 32, 64, 128, 256):
    for gate, kw in gates.items():
        for v_first in (False, True):
            for T, H in ((64, 32), (4096, 32), (8192, 4)):  # one part, pipelined parts, segments
                q = torch.randn(1, T, H, dim, dtype=bf)
                extra = dict(kw, A_log=torch.zeros(H), dt_bias=torch.zeros(H * dim)) if kw else {}
                scan(f"prefill dim {dim} {gate} v_first {v_first} T {T} H {H}",
                     lambda: kimiops.chunk_kda(q, q, q, q.float().clamp(max=0) if not kw else q,
                                               torch.randn(1, T, H, dtype=bf), initial_state=torch.zeros(1, H, dim, dim),
                                               output_final_state=True, use_qk_l2norm_in_kernel=True,
                                               use_beta_sigmoid_in_kernel=True, state_v_first=v_first, **extra))
            for N in (1, 2, 4, 64):
                q = torch.randn(1, 2 * N, 32, dim, dtype=bf)
                extra = dict(kw, A_log=torch.zeros(32), dt_bias=torch.zeros(32 * dim)) if kw else {}
                scan(f"decode cu_seqlens dim {dim} {gate} v_first {v_first} N {N}",
                     lambda: kimiops.fused_recurrent_kda(
                         q, q, q, q.float().clamp(max=0) if not kw else q, torch.randn(1, 2 * N, 32, dtype=bf),
                         initial_state=torch.zeros(N, 32, dim, dim), cu_seqlens=torch.arange(0, 2 * N + 1, 2),
                         ssm_state_indices=torch.arange(N, dtype=torch.int32), use_qk_l2norm_in_kernel=True,
                         use_beta_sigmoid_in_kernel=True, state_v_first=v_first, **extra))
print(f"kernels compiled: {dict(seen)}")
print(f"variants with a fused shuffle in a stored reduction: {len(bad)}")
for label, name in bad:
    print(f"  {label}: {name}")
