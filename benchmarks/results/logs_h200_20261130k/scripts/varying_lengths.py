"""Eager chunk_kda calls whose shapes never repeat (a serving engine's extend): host time until
return per call, median over 60 calls with T = 200..259 (B1, H = HV = 32, softplus gate, L2 norm,
beta sigmoid, final state), then 60 calls repeating T = 256. Tree given as argv[1]."""
import statistics
import sys
import time
sys.path.insert(0, sys.argv[1])
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


call(inputs(64))  # compile
torch.cuda.synchronize()
tiny = torch.zeros(16, device="cuda")
for label, lengths in (("distinct T", list(range(200, 260))), ("repeated T", [256] * 60)):
    xs = [inputs(T) for T in lengths]
    torch.cuda.synchronize()
    times, adds = [], []
    for x in xs:
        t0 = time.perf_counter()
        call(x)
        times.append(time.perf_counter() - t0)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        tiny.add_(1)
        adds.append(time.perf_counter() - t0)
        torch.cuda.synchronize()
    print(f"{kimiops.__file__}: {label}: until return median {statistics.median(times) * 1e6:.1f} us "
          f"(torch.add_ {statistics.median(adds) * 1e6:.1f} us)", flush=True)
