"""fp32 -> tensor-core operand rounding (``kimiops.kda.kernels.dot_operands``), through a one-line kernel
(interpreter on CPU, the GPU when present), against a float64 model of each format."""

import math

import torch
import triton
import triton.language as tl

from kimiops.kda.kernels.dot_operands import f16_hi_lo, tf32_operand, tf32_rna
from kimiops.testing import tf32_rounded


@triton.jit
def _apply_kernel(x, y_tf32, y_hi, y_lo, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(x + offs, mask=m, other=0.0)
    tl.store(y_tf32 + offs, tf32_rna(v), mask=m)
    hi, lo = f16_hi_lo(v)
    tl.store(y_hi + offs, hi, mask=m)
    tl.store(y_lo + offs, lo, mask=m)


def _apply(x):
    y, hi, lo = torch.empty_like(x), torch.empty(x.shape, dtype=torch.float16, device=x.device), \
        torch.empty(x.shape, dtype=torch.float16, device=x.device)
    _apply_kernel[(triton.cdiv(x.numel(), 256),)](x, y, hi, lo, x.numel(), BLOCK=256)
    return y.cpu(), hi.cpu(), lo.cpu()


def test_tf32_rna_rounds_to_nearest_ties_away(device):
    """Exact ties go away from zero, their neighbours to the nearest tf32 value, every result is exact in tf32."""
    gen = torch.Generator().manual_seed(0)
    mant = torch.randint(1 << 10, 1 << 11, (512,), generator=gen).double()
    exps = torch.randint(-100, 100, (512,), generator=gen).double()
    # exact ties (half a tf32 unit past a tf32 value), values just below and above them, random values
    ties = (mant + 0.5) * torch.pow(2.0, exps - 10)
    rand = torch.randn(2048, generator=gen, dtype=torch.float64) * torch.pow(2.0, torch.randint(-60, 60, (2048,),
                                                                                             generator=gen).double())
    vals = torch.cat([ties, -ties, torch.nextafter(ties.float(), torch.tensor(0.0)).double(),
                      torch.nextafter(ties.float(), torch.tensor(math.inf)).double(), rand, torch.zeros(1)]).float()
    y, _, _ = _apply(vals.to(device))
    assert torch.equal(y, tf32_rounded(vals))
    assert not (y.view(torch.int32) & 0x1FFF).any()  # exact in tf32: the 13 bits an MMA drops are zero


def test_f16_hi_lo_carries_22_bits(device):
    """hi is x rounded to fp16; hi + lo holds x to ~22 bits."""
    gen = torch.Generator().manual_seed(1)
    vals = (torch.randn(4096, generator=gen) * 300).float()
    _, hi, lo = _apply(vals.to(device))
    assert torch.equal(hi, vals.half())  # hi: x rounded to fp16
    err = (hi.double() + lo.double() - vals.double()).abs()
    # ~22 significant bits, down to half of fp16's smallest subnormal step (lo's floor)
    assert bool((err <= vals.double().abs() * 2.0 ** -21 + 2.0 ** -25).all())


@triton.jit
def _operand_kernel(x, y, n, PREC: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(y + offs, tf32_operand(tl.load(x + offs, mask=m, other=0.0), PREC), mask=m)


def test_tf32_operand_rounds_only_for_tf32_dots(device):
    """A tf32 dot's operand is rounded as ``tf32_rna`` rounds it; "ieee" (and "tf32x3") operands keep every bit."""
    vals = (torch.randn(1024, generator=torch.Generator().manual_seed(2)) * 50).float().to(device)
    rounded, _, _ = _apply(vals)
    for prec, expected in (("tf32", rounded), ("ieee", vals.cpu()), ("tf32x3", vals.cpu())):
        y = torch.empty_like(vals)
        _operand_kernel[(4,)](vals, y, vals.numel(), PREC=prec, BLOCK=256)
        assert torch.equal(y.cpu(), expected), prec
    assert not torch.equal(rounded, vals.cpu())  # the values are not tf32 already
