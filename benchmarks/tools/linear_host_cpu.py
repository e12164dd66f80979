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
    values = [x, w, o, o, o, o, 4, 64, 64, 64, 64, 64, 64, False, False, True, True, 32, 16, 128, 6, 1, 2, True, 1024]
    options = {"num_warps": 4, "num_stages": 6, "launch_pdl": True}
    key_us = loop_us(lambda: specialization_key(_skinny_linear_kernel, 0, values, options))
    print(f"specialization_key of the skinny kernel ({len(_skinny_linear_kernel.params)} parameters): {key_us:.2f} us")


if __name__ == "__main__":
    main()
