"""cProfile of 60 eager chunk_kda calls with never-repeating T (= the full path every call), B1, 32 heads,
softplus gate: where the host time of a full-path call goes."""
import cProfile
import pstats
import sys
import time
import torch
import kimiops

H = HV = 32
D = 128
gen = torch.Generator(device="cuda").manual_seed(0)
A_log = torch.log(torch.rand(HV, device="cuda", generator=gen) * 15 + 1)
dt = torch.randn(HV * D, device="cuda", generator=gen) * 0.5


def inputs(T):
    q, k, g = (torch.randn(1, T, H, D, device="cuda", generator=gen).to(torch.bfloat16) for _ in range(3))
    v = torch.randn(1, T, HV, D, device="cuda", generator=gen).to(torch.bfloat16)
    beta = torch.randn(1, T, HV, device="cuda", generator=gen).to(torch.bfloat16)
    return q, k, v, g, beta


def call(x):
    return kimiops.chunk_kda(*x, output_final_state=True, use_qk_l2norm_in_kernel=True, use_gate_in_kernel=True,
                             use_beta_sigmoid_in_kernel=True, A_log=A_log, dt_bias=dt)


for T in (64, 65, 80):  # compile the specializations
    call(inputs(T))
torch.cuda.synchronize()
xs = [inputs(T) for T in range(300, 360)]
torch.cuda.synchronize()
t0 = time.perf_counter()
for x in xs:
    call(x)
print(f"60 distinct-T calls, enqueue time per call {(time.perf_counter() - t0) / 60 * 1e6:.1f} us (no profiler)")
torch.cuda.synchronize()
xs = [inputs(T) for T in range(400, 460)]
torch.cuda.synchronize()
prof = cProfile.Profile()
prof.enable()
for x in xs:
    call(x)
prof.disable()
torch.cuda.synchronize()
st = pstats.Stats(prof, stream=sys.stdout)
st.sort_stats("cumulative").print_stats(45)
st.sort_stats("tottime").print_stats(30)
