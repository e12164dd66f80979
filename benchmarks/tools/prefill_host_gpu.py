"""Host time of eager kimiops.chunk_kda calls on short prompts (B1, T in 64/256/1024, H=HV=32,
K=V=128, bf16, softplus gate in kernel, L2 norm, final state), the tree on sys.path[0]'s kimiops.
Per T: median until-return time of one call after the GPU went idle, and the back-to-back pace
(50 calls enqueued without sync, per call), next to a lone torch.add_."""
import statistics
import sys
import time

import torch

sys.path.insert(0, sys.argv[1])
import kimiops  # noqa: E402


def host_us(fn, iters=200):
    fn(); torch.cuda.synchronize()
    ts = []
    for _ in range(iters):
        torch.cuda.synchronize()
        t0 = time.perf_counter(); fn(); ts.append(time.perf_counter() - t0)
    return statistics.median(ts) * 1e6


def pace_us(fn, calls=50):
    fn(); torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    t1 = time.perf_counter(); torch.cuda.synchronize()
    return (t1 - t0) / calls * 1e6


H = HV = 32
K = V = 128
gen = torch.Generator(device="cuda").manual_seed(0)
tiny = torch.zeros(16, device="cuda")
print(kimiops.__file__, "torch.add_ until return %.1f us" % host_us(lambda: tiny.add_(1)))
for T in (64, 256, 1024):
    q, k, g = (torch.randn(1, T, H, K, device="cuda", generator=gen).to(torch.bfloat16) for _ in range(3))
    v = torch.randn(1, T, HV, V, device="cuda", generator=gen).to(torch.bfloat16)
    beta = torch.randn(1, T, HV, device="cuda", generator=gen).to(torch.bfloat16)
    A_log = torch.log(torch.rand(HV, device="cuda", generator=gen) * 15 + 1)
    dt = torch.randn(HV * K, device="cuda", generator=gen) * 0.5
    fn = lambda: kimiops.chunk_kda(q, k, v, g, beta, output_final_state=True, use_qk_l2norm_in_kernel=True,  # noqa: E731
                                   use_gate_in_kernel=True, use_beta_sigmoid_in_kernel=True, A_log=A_log, dt_bias=dt)
    fn(); torch.cuda.synchronize()
    st = torch.cuda.Event(enable_timing=True); en = torch.cuda.Event(enable_timing=True)
    st.record(); fn(); en.record(); torch.cuda.synchronize()
    print(f"T={T}: until return {host_us(fn):.1f} us, back-to-back pace {pace_us(fn):.1f} us, one call on the GPU {st.elapsed_time(en)*1e3:.1f} us")
