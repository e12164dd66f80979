"""fp32 -> fp16 ``hi + lo`` split, for exact fp16 tensor-core products of fp32 values.

``hi`` is ``x`` rounded to fp16 and ``lo`` the rounding error, rounded to fp16 again: together
about 22 significant bits. Products of either half with an fp16 operand are exact in the tensor
cores, which accumulate in fp32. The caller keeps ``x`` inside fp16's range (a clamp or a scale).
"""

from __future__ import annotations

import triton
import triton.language as tl


@triton.jit
def f16_hi_lo(x):
    """fp32 ``x`` (within fp16 range) -> fp16 ``(hi, lo)`` with ``hi + lo ~= x`` to ~22 bits."""
    hi = x.to(tl.float16)
    return hi, (x - hi.to(tl.float32)).to(tl.float16)
