import math

import pytest
import torch
import triton
import triton.language as tl

from kimiops.kda.gate import kda_gate, kda_gate_tl, l2norm, softplus


def test_softplus_gate_hand_computed():
    g = torch.tensor([[[0.0, 1.0], [-2.0, 30.0]]], dtype=torch.float64)  # [1, HV=2, K=2]
    A_log = torch.tensor([0.0, math.log(200.0)], dtype=torch.float64)
    dt_bias = torch.tensor([0.5, -0.5, 0.0, 0.0], dtype=torch.float64)
    out = kda_gate(g, A_log, dt_bias, output_dtype=torch.float64)
    expect = torch.tensor([[[-math.log1p(math.exp(0.5)), -math.log1p(math.exp(0.5))],
                            [-200 * math.log1p(math.exp(-2.0)), -200 * 30.0]]], dtype=torch.float64)
    torch.testing.assert_close(out, expect, rtol=1e-12, atol=0)


def test_lower_bound_gate_hand_computed():
    g = torch.tensor([[[0.0, 2.0]]], dtype=torch.float64)
    A_log = torch.tensor([math.log(3.0)], dtype=torch.float64)
    dt_bias = torch.tensor([1.0, 0.0], dtype=torch.float64)
    out = kda_gate(g, A_log, dt_bias, lower_bound=-5.0, output_dtype=torch.float64)
    sig = lambda x: 1 / (1 + math.exp(-x))  # noqa: E731
    expect = torch.tensor([[[-5 * sig(3.0), -5 * sig(6.0)]]], dtype=torch.float64)
    torch.testing.assert_close(out, expect, rtol=1e-12, atol=0)
    out_no_a = kda_gate(g, None, dt_bias, lower_bound=-2.0, output_dtype=torch.float64)
    torch.testing.assert_close(out_no_a, torch.tensor([[[-2 * sig(1.0), -2 * sig(2.0)]]], dtype=torch.float64))


def test_softplus_gate_needs_A_log():
    with pytest.raises(ValueError, match="A_log"):
        kda_gate(torch.zeros(1, 2, 4))


def test_gate_is_nonpositive_and_finite_for_large_logits():
    g = torch.randn(64, 4, 8, dtype=torch.float64) * 1e3
    out = kda_gate(g, torch.full((4,), math.log(200.0)), torch.zeros(32))
    assert torch.isfinite(out).all() and (out <= 0).all()


def test_softplus_threshold_matches_torch():
    x = torch.linspace(-40, 40, 1001, dtype=torch.float64)
    torch.testing.assert_close(softplus(x), torch.nn.functional.softplus(x))


def test_l2norm_hand_computed():
    x = torch.tensor([[3.0, 4.0]], dtype=torch.float64)
    torch.testing.assert_close(l2norm(x), x / math.sqrt(25 + 1e-6))


@triton.jit
def _gate_kernel(x, out, A, lower_bound, N: tl.constexpr, USE_LOWER_BOUND: tl.constexpr):
    i = tl.arange(0, N)
    tl.store(out + i, kda_gate_tl(tl.load(x + i), A, lower_bound, True, USE_LOWER_BOUND))


@pytest.mark.parametrize("lower_bound", [None, -5.0])
def test_triton_gate_matches_torch(device, lower_bound):
    """The kernels' gate (on the GPU with ``ex2.approx`` and ``div.approx``; relative accuracy for
    very negative logits too) against the torch gate in fp64, over logits from -60 to 60. Until
    2026-12-02 the softplus gate took its log from the hardware's ``lg2.approx``, whose absolute error
    failed this on the H200 (0.07; the test had only run in the interpreter)."""
    x = torch.linspace(-60, 60, 4096, dtype=torch.float64)
    A = 7.5
    out = torch.empty(4096, dtype=torch.float32, device=device)
    _gate_kernel[(1,)](x.to(device, torch.float32), out, A, lower_bound or 0.0, N=4096,
                       USE_LOWER_BOUND=lower_bound is not None)
    A_log = torch.tensor([math.log(A)], dtype=torch.float64)
    expect = kda_gate(x.to(torch.float32).double().reshape(1, 1, -1), A_log, None, lower_bound=lower_bound,
                      output_dtype=torch.float64).reshape(-1)
    got = out.cpu().double()
    assert (got <= 0).all() and torch.isfinite(got).all()
    # fp32 rounding of the activation's argument (A * x for the lower-bound gate) moves a tail
    # value by up to ~6e-8 * |argument| relative
    arg = (A * x).abs() if lower_bound is not None else x.abs()
    rel = (got - expect).abs() / expect.abs().clamp_min(1e-30) / (1 + arg)
    assert rel.max().item() < 1e-6, rel.max().item()
