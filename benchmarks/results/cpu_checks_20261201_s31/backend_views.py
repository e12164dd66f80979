"""Host cost of the views KDABackend.decode makes for batch mode, on the CPU machine (bf16 CPU tensors,
H = HV = 32, K = V = 128, N = 1): the slice-and-unsqueeze it made before against one view per tensor."""
import time

import torch

K = 128
N, HEADS = 1, 32


def per_call_us(fn, n=50000):
    fn()
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - t0) / n * 1e6


q = torch.randn(1, N, HEADS, K, dtype=torch.bfloat16)
g = torch.randn(1, N, HEADS, K, dtype=torch.bfloat16)
beta = torch.randn(1, N, HEADS, dtype=torch.bfloat16)
o = torch.empty(N, 1, HEADS, K, dtype=torch.bfloat16)
print(f"torch {torch.__version__}")
for rnd in range(3):
    print(f"round {rnd}: x[0, :N].unsqueeze(1) {per_call_us(lambda: q[0, :N].unsqueeze(1)):.2f} us, "
          f"x.view(N, 1, H, K) {per_call_us(lambda: q.view(N, 1, HEADS, K)):.2f} us, "
          f"g[:, :T] {per_call_us(lambda: g[:, :N]):.2f} us, "
          f"o.squeeze(1).unsqueeze(0) {per_call_us(lambda: o.squeeze(1).unsqueeze(0)):.2f} us, "
          f"o.reshape(1, N, HV, V) {per_call_us(lambda: o.reshape(1, N, HEADS, K)):.2f} us")
