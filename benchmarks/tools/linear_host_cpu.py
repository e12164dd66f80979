"""Host-side pieces of an eager ``kimiops.linear`` call, timed on the CPU (no GPU needed): the
whole call against ``F.linear`` on a 1 x 64 @ 64 x 64 bf16 product (auto: torch's GEMM on CPU), the
wrapper's checks, backend name, autograd test and backend decision, and the fast launch path's
specialization key (``kimiops.launch.specialization_key``) for the Triton kernel's 25 parameters.

    python3 benchmarks/tools/linear_host_cpu.py
"""

import torch
import torch.nn.functional as F

import kimiops
from kimiops.bench.timing import loop_us
from kimiops.gemm import linear as L
from kimiops.gemm.skinny import _skinny_linear_kernel
from kimiops.launch import specialization_key


def main() -> None:
    x = torch.randn(1, 64, dtype=torch.bfloat16)
    w = torch.randn(64, 64, dtype=torch.bfloat16)
    print(f"F.linear: {loop_us(lambda: F.linear(x, w)):.2f} us; kimiops.linear (auto): {loop_us(lambda: kimiops.linear(x, w)):.2f} us")
    print(f"  _check {loop_us(lambda: L._check(x, w, None, None)):.2f} us, _requested {loop_us(lambda: L._requested(None)):.2f} us, "
          f"_needs_autograd {loop_us(lambda: L._needs_autograd(x, w, None)):.2f} us, "
          f"_config {loop_us(lambda: L._config(x, w, None, x.dtype, 'auto')):.2f} us")
    o = torch.empty(4, 64, dtype=torch.bfloat16)
    # one value per kernel parameter, by name, so the list follows the kernel's signature
    by_name = dict(x_ptr=x, w_ptr=w, b_ptr=o, y_ptr=o, part_ptr=o, count_ptr=o, M=4, N=64, K=64, K_SPLIT=64,
                   stride_xm=64, stride_wn=64, stride_ym=64, HAS_BIAS=False, SPLIT=False, EVEN_N=True,
                   EVEN_K=True, BLOCK_N=32, BLOCK_M=16, BLOCK_K=128, NUM_STAGES=6, REDUCE_UNROLL=1,
                   CHUNK_TILES=2, PDL=True, PREFETCH_K=1024, PREFETCH_STEP=512)
    values = [by_name[p.name] for p in _skinny_linear_kernel.params]
    options = {"num_warps": 4, "num_stages": 6, "launch_pdl": True}
    key_us = loop_us(lambda: specialization_key(_skinny_linear_kernel, 0, values, options))
    print(f"specialization_key of the skinny kernel ({len(_skinny_linear_kernel.params)} parameters): {key_us:.2f} us")


if __name__ == "__main__":
    main()
