import time, torch
from kimiops.kda import args
args.debug_enabled = lambda: False
H, D = 32, 128
def mk(T):
    q = torch.empty(1, T, H, D, device="meta", dtype=torch.bfloat16)
    g = torch.empty(1, T, H, D, device="meta", dtype=torch.bfloat16)
    beta = torch.empty(1, T, H, device="meta", dtype=torch.bfloat16)
    cu = torch.empty(9, device="meta", dtype=torch.int32)
    return q, g, beta, cu
A = torch.empty(H, device="meta"); dt = torch.empty(H * D, device="meta")
calls = [mk(T) for T in range(200, 2200)]
def run(c):
    q, g, beta, cu = c
    return args.check_kda_args(q, q, q, g, beta, None, None, True, A, dt, None, False, cu, None, "initial_state_indices")
for label, seq in (("distinct T", calls), ("repeated T", [calls[0]] * 2000)):
    t0 = time.perf_counter()
    for c in seq:
        run(c)
    print(label, (time.perf_counter() - t0) / len(seq) * 1e6, "us")
