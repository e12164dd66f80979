"""Host-side pieces of an eager decode call, timed on the CPU (no GPU needed): the metadata key of
``kimiops.kda.runner.eager_signature``, the ``KIMIOPS_DEBUG`` read, the key's dict lookup, and
Triton 3.6's ``CudaLauncher.__call__`` (Python) against calling its C ``launch`` directly (both with
a stand-in ``launch``), for the decode case of ``benchmarks/bench_kda_decode.py`` at N = 1.

    python3 benchmarks/tools/decode_host_cpu.py
"""
import timeit
import types

import torch
from triton.backends.nvidia.driver import CudaLauncher

from kimiops.kda.runner import DECODE, eager_signature
from kimiops.validation import debug_enabled


def us(fn, n=50000) -> float:
    return timeit.timeit(fn, number=n) / n * 1e6


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

    def signature():
        return eager_signature(DECODE, q, k, v, g, beta, None, pool, True, True, True, True, A, dt, None, True, cu,
                               idx, None, False)

    key = signature()
    cache = {key: None}
    print(f"eager_signature (metadata key): {us(signature):.2f} us")
    print(f"dict lookup of that key: {us(lambda: cache.get(key)):.2f} us")
    print(f"debug_enabled() (KIMIOPS_DEBUG read): {us(debug_enabled):.2f} us")
    fake = types.SimpleNamespace(num_ctas=1, launch=lambda *a: None, global_scratch_size=0, global_scratch_align=1,
                                 profile_scratch_size=0, profile_scratch_align=1, launch_cooperative_grid=False,
                                 launch_pdl=True)
    args = tuple(range(30))
    via = us(lambda: CudaLauncher.__call__(fake, 512, 1, 1, 0, 0, None, None, None, None, *args), 200000)
    direct = us(lambda: fake.launch(512, 1, 1, 0, 0, False, True, None, None, None, None, None, None, *args), 200000)
    print(f"Triton launcher, through CudaLauncher.__call__: {via:.2f} us; its C launch called directly: {direct:.2f} us")


if __name__ == "__main__":
    main()
