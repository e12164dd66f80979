"""Gate math of KDA, shared by kernels, references and tests.

Each formula has a torch version (references, CPU path) and a Triton device function (kernels)
next to each other, so the two cannot drift apart.

- softplus gate (Kimi-Linear):  ``g = -exp(A_log[h]) * softplus(g_raw + dt_bias[h, :])``
- lower-bound gate (Kimi-K3):   ``g = lower_bound * sigmoid(exp(A_log[h]) * (g_raw + dt_bias[h, :]))``,
  and with ``A_log = None``:     ``g = lower_bound * sigmoid(g_raw + dt_bias[h, :])``
- ``l2norm(x) = x * rsqrt(sum(x^2) + 1e-6)`` over the last dimension
- ``beta = sigmoid(b_raw)`` when the caller passes logits, ``2 * sigmoid(b_raw)`` with FLA's
  ``allow_neg_eigval`` (beta in (0, 2): the transition ``I - beta k k^T`` may then have a negative
  eigenvalue)

The torch softplus uses the threshold 20 (``x > 20 -> x``), as ``torch.nn.functional.softplus``
does; the Triton one computes ``max(x, 0) + log1p(e^-|x|)`` everywhere (above 20 that is ``x`` to
within e^-20 relative).
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice

from kimiops.interpreter import interpreter_enabled

L2NORM_EPS = 1e-6
SOFTPLUS_THRESHOLD = 20.0


# --------------------------------------------------------------------------- torch
def l2norm(x: torch.Tensor, eps: float = L2NORM_EPS) -> torch.Tensor:
    """``x * rsqrt(sum(x**2, -1) + eps)``, computed in x's dtype (upcast the input for fp32/fp64)."""
    return x * torch.rsqrt((x * x).sum(-1, keepdim=True) + eps)


def softplus(x: torch.Tensor) -> torch.Tensor:
    return torch.where(x > SOFTPLUS_THRESHOLD, x, torch.log1p(torch.exp(torch.clamp(x, max=SOFTPLUS_THRESHOLD))))


def beta_from_logits(b: torch.Tensor, allow_neg_eigval: bool = False) -> torch.Tensor:
    """``sigmoid(b)``, or ``2 * sigmoid(b)`` with ``allow_neg_eigval``, in b's dtype."""
    beta = torch.sigmoid(b)
    return 2 * beta if allow_neg_eigval else beta


def kda_gate(
    g: torch.Tensor,
    A_log: torch.Tensor | None = None,
    dt_bias: torch.Tensor | None = None,
    lower_bound: float | None = None,
    output_dtype: torch.dtype = torch.float32,
) -> torch.Tensor:
    """Log-space decay from raw gate logits.

    Args:
        g: raw gate logits ``[..., HV, K]``.
        A_log: ``[HV]`` per-head log rate; required for the softplus gate, optional for the
            lower-bound gate.
        dt_bias: ``[HV * K]`` (or ``[HV, K]``) bias added to ``g`` before the activation.
        lower_bound: ``None`` for the softplus gate, else a float in ``[-5, 0)`` selecting the
            lower-bound gate.
        output_dtype: dtype of the result (math runs in fp32, or fp64 for fp64 input).
    Returns:
        ``[..., HV, K]`` log decay, ``<= 0``.
    """
    HV, K = g.shape[-2], g.shape[-1]
    compute = torch.float64 if g.dtype == torch.float64 else torch.float32
    x = g.to(compute)
    if dt_bias is not None:
        x = x + dt_bias.to(compute).reshape(HV, K)
    if lower_bound is None:
        if A_log is None:
            raise ValueError("A_log: the softplus gate needs A_log [HV], got None")
        out = -torch.exp(A_log.to(compute)).reshape(HV, 1) * softplus(x)
    else:
        if A_log is not None:
            x = torch.exp(A_log.to(compute)).reshape(HV, 1) * x
        out = lower_bound * torch.sigmoid(x)
    return out.to(output_dtype)


# --------------------------------------------------------------------------- triton
LOG2E = tl.constexpr(1.4426950408889634)
#: Whether kernels may call libdevice: compiled, not in Triton's interpreter, which has none (the softplus
#: gate's ``div.approx.f32`` divisions, the decode kernel's rounded products).
LIBDEVICE = tl.constexpr(not interpreter_enabled())
# atanh(s) / s as a polynomial in s^2 on s in [0, 1/3]: a degree-4 least-squares fit at Chebyshev
# nodes, relative error 7.8e-9 with the coefficients rounded to fp32 (Taylor of that degree: 1.6e-6;
# benchmarks/results/cpu_checks_20261202_s37/softplus_poly_error.py).
_ATANH_C0 = tl.constexpr(1.0000000039388743)
_ATANH_C1 = tl.constexpr(0.33333157967540805)
_ATANH_C2 = tl.constexpr(0.2001242686172233)
_ATANH_C3 = tl.constexpr(0.1398070941759986)
_ATANH_C4 = tl.constexpr(0.14087328630587875)


@triton.jit
def exp_ftz_tl(x):
    """``e^x`` as ``2^(x log2 e)``: ``ex2.approx.ftz``, 2 SASS instructions per element against 5 for
    ``tl.exp``, whose ``ex2.approx`` keeps denormal results
    (``benchmarks/results/offline_math_sass_20261130i.log``); results below 2^-126 flush to 0. The
    gates' own exponentials. (Stage 1 keeps its log decays in base 2 and takes ``tl.exp2`` of them
    directly, the same instruction: ``chunk_intra``.)"""
    return tl.exp2(x * LOG2E)


@triton.jit
def _div_tl(a, b):
    if LIBDEVICE:  # div.approx.f32, 2 ulp
        return libdevice.fast_dividef(a, b)
    else:
        return a / b


@triton.jit
def softplus_tl(x):
    """``log(1 + e^x)`` for fp32 ``x`` with no hardware log: ``max(x, 0) + log1p(y)`` with
    ``y = e^-|x|`` in (0, 1], and ``log1p(y) = 2 atanh(s)``, ``s = y / (2 + y)`` in (0, 1/3], by a
    short polynomial. On the H200 within 9.9e-7 relative of fp64 for ``x`` in [-20, 60], 3.5e-6 at
    -60 (the rounding of ``e^x``'s argument grows with ``|x|``) (``logs_h200_20261202d/r2_gate.log``).
    The hardware's ``lg2.approx`` has an absolute error of ~2^-22: ``log(1 + y)`` through it lost
    the relative accuracy of small ``y`` (0.62 for ``x`` in [-20, -10), ``r1_gate.log``)."""
    y = exp_ftz_tl(-tl.abs(x))
    s = _div_tl(y, 2.0 + y)
    t = s * s
    p = _ATANH_C0 + t * (_ATANH_C1 + t * (_ATANH_C2 + t * (_ATANH_C3 + t * _ATANH_C4)))
    return tl.maximum(x, 0.0) + 2.0 * s * p


@triton.jit
def sigmoid_tl(x):
    """fp32 ``1 / (1 + e^-x)``. For ``x`` below about -88 (a lower-bound gate's ``A x`` with A up to
    ~200, or beta logits) ``e^-x`` overflows to +inf and the result is exactly 0, the correct limit:
    the numerator is finite, so no NaN can come of it. This is the one exponential of the gates whose
    argument is not <= 0; it never meets a decay sum."""
    return 1.0 / (1.0 + exp_ftz_tl(-x))


@triton.jit
def beta_from_logits_tl(x, NEG_EIGVAL: tl.constexpr):
    """fp32 ``sigmoid(x)``, or ``2 * sigmoid(x)`` with ``NEG_EIGVAL`` (matches ``beta_from_logits``)."""
    beta = sigmoid_tl(x)
    if NEG_EIGVAL:
        beta = 2.0 * beta
    return beta


@triton.jit
def kda_gate_tl(x, A, lower_bound, HAS_A: tl.constexpr, USE_LOWER_BOUND: tl.constexpr):
    """Gate of fp32 logits ``x`` (dt_bias already added); ``A = exp(A_log[h])`` as fp32 scalar."""
    if USE_LOWER_BOUND:
        if HAS_A:
            x = A * x
        return lower_bound * sigmoid_tl(x)
    else:
        return -A * softplus_tl(x)


@triton.jit
def l2_inv_norm_tl(sum_sq):
    """``rsqrt(sum(x^2) + 1e-6)``: the factor ``l2norm`` multiplies x by, from its sum of squares
    (kernels that accumulate the sum over K slices scale their results by it afterwards)."""
    return tl.rsqrt(sum_sq + 1e-6)


@triton.jit
def l2norm_tl(x, axis: tl.constexpr):
    """Row L2 norm of an fp32 block along ``axis`` with eps 1e-6 (matches ``l2norm``)."""
    return x * l2_inv_norm_tl(tl.sum(x * x, axis=axis, keep_dims=True))
