"""CUDA-graph median of 20 chained N = 1 packed-decode calls (as one_token_ab.py, env KIMIOPS_ONE_TOKEN=0
only unless argv[2] == "both": then a call with 1 first compiles the one-token kernel too), PDL on and off.

    PYTHONPATH=<tree>:$PWD/benchmarks python3 n1_graph.py <label> [both]
"""
import os
import sys

import torch

from kimiops.kda.kernels import recurrent as rec  # first: the tree under test
import kimiops  # noqa: E402
from kimiops.bench.timing import graph_us  # noqa: E402

label = sys.argv[1]
both = len(sys.argv) > 2 and sys.argv[2] == "both"
H, K, V, N = 32, 128, 128, 1
gen = torch.Generator(device="cuda").manual_seed(0)
bf = torch.bfloat16
A_log = torch.log(torch.rand(H, device="cuda", generator=gen) * 15 + 1)
dt_bias = torch.randn(H * K, device="cuda", generator=gen)
pool = torch.randn(64, H, V, K, device="cuda", generator=gen) * 0.1
mixed = torch.randn(N, 3 * H * K, device="cuda", generator=gen).to(bf)
raw_g = torch.randn(1, N, H, K, device="cuda", generator=gen).to(bf)
raw_beta = torch.randn(1, N, H, device="cuda", generator=gen).to(bf)
rs = mixed.stride(0)
q, k, v = (mixed.as_strided((N, 1, H, K), (rs, rs, K, 1), off * H * K) for off in range(3))
idx = torch.tensor([3], dtype=torch.int32, device="cuda")


def call(one="0"):
    os.environ["KIMIOPS_ONE_TOKEN"] = one
    return kimiops.fused_recurrent_kda(q, k, v, raw_g.view(N, 1, H, K), raw_beta.view(N, 1, H), None, pool,
                                       use_qk_l2norm_in_kernel=True, use_gate_in_kernel=True,
                                       use_beta_sigmoid_in_kernel=True, A_log=A_log, dt_bias=dt_bias,
                                       state_v_first=True, ssm_state_indices=idx)


if both:
    call("1")
    os.environ["KIMIOPS_ONE_TOKEN"] = "0"
res = {}
for _ in range(3):
    for pdl in (True, False):
        rec._PDL = pdl
        us = graph_us([call] * 20)
        res[pdl] = min(res.get(pdl, us), us)
rec._PDL = True
print(f"{label:>10} {'both' if both else 'one kernel':>10}: PDL on {res[True]:.2f} us, off {res[False]:.2f} us", flush=True)
