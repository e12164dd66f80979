"""Host-side pieces of an eager decode call, timed on the CPU (no GPU needed): the scalar key of
``kimiops.kda.runner.eager_scalars`` and its dict lookup, the tensor guard's check (against the
flat Python key it replaced), the ``KIMIOPS_DEBUG`` read, and
Triton 3.6's ``CudaLauncher.__call__`` (Python) against calling its C ``launch`` directly (both with
a stand-in ``launch``), for the decode case of ``benchmarks/bench_kda_decode.py`` at N = 1.

    python3 benchmarks/tools/decode_host_cpu.py
"""
import types

import torch
from triton.backends.nvidia.driver import CudaLauncher

from kimiops.bench.timing import loop_us
from kimiops.kda.runner import DECODE, eager_scalars, eager_tensors, tensor_guard
from kimiops.validation import debug_enabled


def main() -> None:
    H = HV = 32
    K = V = 128
    N = 1
    q = torch.randn(1, N, H, K, dtype=torch.bfloat16)
    k, v, g = q.clone(), q.clone(), q.clone()
    beta = torch.randn(1, N, HV, dtype=torch.bfloat16)
    pool = torch.zeros(4, HV, V, K)
    idx = torch.zeros(N, dtype=torch.int32)
    cu = torch.arange(N + 1, dtype=torch.int32)
    A, dt = torch.zeros(HV), torch.zeros(HV * K)

    def signature():  # the flat Python key of the thirteenth session, for comparison
        return ("fused_recurrent_kda", None, None, None, None, True, True, True, True, True, False,
                *(x for t in (q, k, v, g, beta) for x in (t.shape, t.stride(), t.dtype, t.get_device())),
                *((t.shape, t.stride(), t.dtype, t.get_device()) for t in (idx, cu, A, dt)),
                (pool.shape, pool.stride(), pool.dtype, pool.get_device(), pool.data_ptr() % 16 == 0))

    def scalars():
        return eager_scalars(DECODE, None, pool, True, True, True, True, A, dt, None, True, cu, idx, None, False)

    def tensors():
        return eager_tensors(q, k, v, g, beta, pool, idx, cu, A, dt)

    key, ts = scalars(), tensors()
    cache = {key: None}
    guard = tensor_guard(ts)
    print(f"previous flat key (per-tensor shape, stride(), dtype, get_device()): {loop_us(signature):.2f} us")
    print(f"eager_scalars (scalar key): {loop_us(scalars):.2f} us")
    print(f"dict lookup of that key: {loop_us(lambda: cache.get(key)):.2f} us")
    print(f"eager_tensors (guard arguments): {loop_us(tensors):.2f} us")
    print(f"TensorGuards.check of the 10 tensors: {loop_us(lambda: guard.check(*ts)):.2f} us")
    print(f"debug_enabled() (KIMIOPS_DEBUG read): {loop_us(debug_enabled):.2f} us")
    fake = types.SimpleNamespace(num_ctas=1, launch=lambda *a: None, global_scratch_size=0, global_scratch_align=1,
                                 profile_scratch_size=0, profile_scratch_align=1, launch_cooperative_grid=False,
                                 launch_pdl=True)
    args = tuple(range(30))
    via = loop_us(lambda: CudaLauncher.__call__(fake, 512, 1, 1, 0, 0, None, None, None, None, *args), 20000)
    direct = loop_us(lambda: fake.launch(512, 1, 1, 0, 0, False, True, None, None, None, None, None, None, *args), 20000)
    print(f"Triton launcher, through CudaLauncher.__call__: {via:.2f} us; its C launch called directly: {direct:.2f} us")


if __name__ == "__main__":
    main()
