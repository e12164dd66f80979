"""Capture 3 chained N = 1 packed-decode calls (as one_token_ab.py) in a CUDA graph with debug mode on and
write the graph's DOT (nodes, kernel parameters, launch attributes) to OUT/<label>.dot; also profile 20 eager
calls and list the kernels launched.

    PYTHONPATH=<tree>:$PWD/benchmarks python3 graph_dump.py <label> <out>
"""
import os
import sys

import torch

from kimiops.kda.kernels import recurrent as rec  # first: the tree under test
import kimiops  # noqa: E402

label, out = sys.argv[1], sys.argv[2]
H, K, V, N = 32, 128, 128, 1
gen = torch.Generator(device="cuda").manual_seed(0)
bf = torch.bfloat16
A_log = torch.log(torch.rand(H, device="cuda", generator=gen) * 15 + 1)
dt_bias = torch.randn(H * K, device="cuda", generator=gen)
pool = torch.randn(8, H, V, K, device="cuda", generator=gen) * 0.1
mixed = torch.randn(N, 3 * H * K, device="cuda", generator=gen).to(bf)
raw_g = torch.randn(1, N, H, K, device="cuda", generator=gen).to(bf)
raw_beta = torch.randn(1, N, H, device="cuda", generator=gen).to(bf)
rs = mixed.stride(0)
q, k, v = (mixed.as_strided((N, 1, H, K), (rs, rs, K, 1), off * H * K) for off in range(3))
idx = torch.tensor([3], dtype=torch.int32, device="cuda")


def call():
    os.environ["KIMIOPS_ONE_TOKEN"] = "0"
    return kimiops.fused_recurrent_kda(q, k, v, raw_g.view(N, 1, H, K), raw_beta.view(N, 1, H), None, pool,
                                       use_qk_l2norm_in_kernel=True, use_gate_in_kernel=True,
                                       use_beta_sigmoid_in_kernel=True, A_log=A_log, dt_bias=dt_bias,
                                       state_v_first=True, ssm_state_indices=idx)


side = torch.cuda.Stream()
side.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(side):
    call()
    call()
torch.cuda.current_stream().wait_stream(side)
torch.cuda.synchronize()
g = torch.cuda.CUDAGraph()
g.enable_debug_mode()
with torch.cuda.graph(g):
    for _ in range(3):
        call()
g.debug_dump(os.path.join(out, f"{label}.dot"))
with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
    for _ in range(20):
        call()
    torch.cuda.synchronize()
print(label, prof.key_averages().table(sort_by="cuda_time_total", row_limit=10))
