"""fp32 values as tensor-core operands, rounded to nearest.

* ``f16_hi_lo``: fp32 -> fp16 ``hi + lo``, for exact fp16 tensor-core products of fp32 values.
  ``hi`` is ``x`` rounded to fp16 and ``lo`` the rounding error, rounded to fp16 again: together
  about 22 significant bits. Products of either half with an fp16 operand are exact in the tensor
  cores, which accumulate in fp32. The caller keeps ``x`` inside fp16's range (a clamp or a scale).
* ``tf32_rna``: fp32 rounded to tf32 (10 stored significand bits), to nearest with ties away from
  zero. A tf32 ``tl.dot`` (``input_precision="tf32"``) hands the fp32 registers to the MMA as they
  are (triton 3.6 emits no ``cvt.rna.tf32.f32``: checked in stage 1's sm_90 PTX), and the MMA uses
  only the tf32 bits. The H200 behaves as if it truncated them toward zero, which biases every
  operand the same way (the bias accumulates along the sum): unrounded, the anchored diagonal of
  ``chunk_intra`` raised o's error at the issue's shape from 1.74e-3 to 1.97e-3, rounded 1.75e-3
  (``benchmarks/results/logs_h200_20261201l/`` runs 1 and 2); rounding ``Tinv diag(beta)``, the state
  stage's u operand, took the final state's error there from 3.7-4.5e-4 to 3.0-3.2e-4
  (``logs_h200_20261202/`` run 3). Rounded first, the operand is exact in tf32. Integer bit
  operations, so the interpreter computes the same values.
* ``tf32_operand``: ``tf32_rna`` where a dot's ``input_precision`` is ``"tf32"``, the value itself
  for any other precision (``"ieee"`` keeps all fp32 bits, ``"tf32x3"`` splits them itself).
"""

from __future__ import annotations

import triton
import triton.language as tl


@triton.jit
def f16_hi_lo(x):
    """fp32 ``x`` (within fp16 range) -> fp16 ``(hi, lo)`` with ``hi + lo ~= x`` to ~22 bits."""
    hi = x.to(tl.float16)
    return hi, (x - hi.to(tl.float32)).to(tl.float16)


@triton.jit
def tf32_rna(x):
    """fp32 ``x`` (finite, below 2^127) -> fp32 holding ``x`` rounded to the nearest tf32 value."""
    bits = x.to(tl.int32, bitcast=True)
    # add half a tf32 unit (bit 12) to the magnitude, then clear the 13 bits the MMA ignores
    return ((bits + 0x1000) & -0x2000).to(tl.float32, bitcast=True)


@triton.jit
def tf32_operand(x, PREC: tl.constexpr):
    """fp32 ``x`` as an operand of a ``tl.dot(..., input_precision=PREC)``: rounded to nearest tf32 for
    ``PREC == "tf32"``, unchanged otherwise."""
    if PREC == "tf32":
        return tf32_rna(x)
    else:
        return x
