"""``kimiops.linear``: low-latency ``y = x @ weight^T + bias`` for decode-sized M.

Backends (capability families in :mod:`kimiops.arch`):

- ``"triton"``: the small-M weight-streaming kernel of :mod:`kimiops.gemm.skinny` on every GPU
  family, and on CPU tensors through Triton's interpreter (``TRITON_INTERPRET=1``).
- ``"cublas"``: ``torch`` matmul (cuBLAS on CUDA tensors, torch's CPU GEMM on CPU tensors).
- ``"auto"`` (default; env ``KIMIOPS_BF16_GEMM_BACKEND`` overrides the default): per
  (family, M, N, K), the kernel config of the measured table of :mod:`kimiops.gemm.dispatch`
  where a kernel won (the Triton one, or on Hopper the Gluon one of
  :mod:`kimiops.gemm.skinny_gluon`, which reads the weight before waiting for the previous
  kernel), cuBLAS everywhere else. Decided at run time with the concrete M, also under
  ``torch.compile``.

The op is registered as ``kimiops::linear`` (functional) and ``kimiops::linear_out``
(writes ``out``), both with fake implementations, so ``torch.compile(fullgraph=True)`` traces
them. Neither syncs the host or allocates beyond the result and the cached split-K scratch
(:mod:`kimiops.gemm.scratch`), so calls can be captured in CUDA graphs.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from kimiops.arch import FAMILIES, Backend, device_family, requested_backend, resolve_backend
from kimiops.gemm import dispatch
from kimiops.gemm.skinny import SkinnyConfig, skinny_linear
from kimiops.gemm.skinny_gluon import gluon_linear, tma_ready
from kimiops.streams import capturing
from kimiops.validation import check_tensor

ENV_VAR = "KIMIOPS_BF16_GEMM_BACKEND"
BACKENDS = {
    "triton": Backend("triton", frozenset(FAMILIES) | {"cpu"}, "Triton small-M kernel (CPU: interpreter)"),
    "cublas": Backend("cublas", None, "torch matmul: cuBLAS on CUDA, torch on CPU"),
}
INPUT_DTYPES = (torch.bfloat16, torch.float16)


def _requested(backend: str | None) -> str:
    """The requested backend name (argument, else environment, else ``"auto"``), checked by name."""
    return requested_backend("linear", backend, BACKENDS, ENV_VAR)


def _cublas_linear(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, out: torch.Tensor) -> None:
    if out.dtype == x.dtype:
        if bias is None:
            torch.mm(x, weight.t(), out=out)
        else:
            torch.addmm(bias, x, weight.t(), out=out)
        return
    # fp32 output from 16-bit inputs: fp32 accumulator written without rounding to 16 bits.
    if x.is_cuda:
        y = torch.mm(x, weight.t(), out_dtype=torch.float32)
    else:
        y = torch.mm(x.float(), weight.t().float())
    if bias is None:
        out.copy_(y)
    else:
        torch.add(y, bias, out=out)


_WARMED: set = set()


def _warm_graph_path(
    x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, out_dtype: torch.dtype, config, where: tuple
) -> None:
    """Compile and load, eagerly, the kernel that a CUDA-graph capture of this call will launch.

    Eager ``auto`` calls return cuBLAS's result, so a serving engine's eager warm-up would never
    build the Triton kernel, and building it inside a capture is not allowed. The first eager call
    of each specialization therefore also runs the kernel once into scratch (discarded).
    ``where``: the decision's key (device, backend, M, N, K), which fixes ``config``.
    """
    key = (where, x.dtype, out_dtype, bias is None)
    if key not in _WARMED:
        _launch_kernel(x, weight, bias, torch.empty((x.shape[0], weight.shape[0]), dtype=out_dtype, device=x.device),
                       config)
        _WARMED.add(key)


def _launch_kernel(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, out: torch.Tensor, config) -> None:
    """Run ``config``'s kernel (Triton or Gluon) on detached views (no copies); a Gluon config
    whose operands TMA cannot address (misaligned pointer or row stride) runs cuBLAS instead."""
    x, weight, bias = _plain(x), _plain(weight), _plain(bias)
    if isinstance(config, SkinnyConfig):
        skinny_linear(x, weight, bias, out, config)
    elif tma_ready(x, weight):
        gluon_linear(x, weight, bias, out, config)
    else:
        _cublas_linear(x, weight, bias, out)


_DECISIONS: dict = {}
# Decisions are memoized for M up to this (decode and small prefill batches, where host time
# matters); larger M are decided per call so the memo cannot grow with every prompt length.
_MEMO_MAX_M = 512


def _config(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, out_dtype: torch.dtype, name: str):
    """The kernel config to run ``x[M, K] @ weight^T`` with, or ``None`` for cuBLAS; ``name`` is a
    backend name checked by :func:`_requested`. The table / backend decision is memoized per
    (device, name, M, N, K, dtype) for M <= ``_MEMO_MAX_M``; the capture state is read on every call."""
    device = x.device
    M, K = x.shape
    N = weight.shape[0]
    key = (device, name, M, N, K, x.dtype)
    decision = _DECISIONS.get(key)
    if decision is None:
        family = device_family(device)
        if name == "auto":
            decision = (dispatch.auto_config(family, M, N, K), True)
        else:
            name = resolve_backend("linear", name, family, BACKENDS, ("cublas",), env_var=ENV_VAR)
            if name == "triton" and family == "cpu" and x.dtype == torch.bfloat16:
                raise TypeError(
                    "x: backend 'triton' on CPU tensors runs in Triton's interpreter, which cannot compute "
                    "bfloat16 products; expected torch.float16 there (or backend 'cublas'), got torch.bfloat16"
                )
            decision = (dispatch.triton_config(family, M, N, K) if name == "triton" else None, False)
        if M <= _MEMO_MAX_M:
            _DECISIONS[key] = decision
    config, auto = decision
    if auto and config is not None and not capturing(device):
        # The table is measured under CUDA-graph replay, where launch costs vanish. Outside a
        # capture these microsecond kernels are bound by host launch time, and cuBLAS launches
        # faster than a Triton kernel (H200, 2026-11-29: the table's picks ran at 0.96x cuBLAS
        # eagerly, benchmarks/results/linear_sm90.json), so eager calls keep cuBLAS.
        _warm_graph_path(x, weight, bias, out_dtype, config, key)
        return None
    return config


def _run(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, out: torch.Tensor, name: str) -> None:
    """``out[M, N] = x[M, K] @ weight^T (+ bias)`` with checked 2-D inputs, M > 0."""
    config = _config(x, weight, bias, out.dtype, name)
    if config is None:  # grad is off on this path: parameters that require grad are used as they are
        _cublas_linear(x, weight, bias, out)
    else:
        _launch_kernel(x, weight, bias, out, config)


@torch.library.custom_op("kimiops::linear", mutates_args=())
def _linear_op(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, backend: str | None) -> torch.Tensor:
    out = torch.empty((x.shape[0], weight.shape[0]), dtype=x.dtype, device=x.device)
    _run(x, weight, bias, out, _requested(backend))
    return out


@_linear_op.register_fake
def _linear_fake(x, weight, bias, backend):
    return x.new_empty((x.shape[0], weight.shape[0]))


@torch.library.custom_op("kimiops::linear_out", mutates_args=("out",))
def _linear_out_op(
    x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, out: torch.Tensor, backend: str | None
) -> None:
    _run(x, weight, bias, out, _requested(backend))


@_linear_out_op.register_fake
def _linear_out_fake(x, weight, bias, out, backend):
    return None


def _check(x, weight, bias, out) -> tuple[int, int, int]:
    """Metadata checks; returns (M, N, K). The common valid call (no ``out``) is recognized with a
    few attribute reads (eager calls are host-bound); anything else gets the itemized checks."""
    if out is None and isinstance(x, torch.Tensor) and isinstance(weight, torch.Tensor):
        xs, ws = x.shape, weight.shape
        if (len(ws) == 2 and len(xs) >= 1 and ws[1] == xs[-1] and x.dtype in INPUT_DTYPES
                and weight.dtype == x.dtype and weight.device == x.device
                and (ws[1] <= 1 or (x.stride(-1) == 1 and weight.stride(-1) == 1))
                and (bias is None or (isinstance(bias, torch.Tensor) and bias.shape == ws[:1] and bias.dtype == x.dtype
                                      and bias.device == x.device and bias.is_contiguous()))):
            return (xs[0] if len(xs) == 2 else math.prod(xs[:-1])), ws[0], ws[1]
    check_tensor("x", x, dtypes=INPUT_DTYPES, last_dim_contiguous=True)
    if x.dim() == 0:
        raise ValueError("x: expected shape [..., K] with at least one dimension, got a 0-d tensor")
    K = x.shape[-1]
    check_tensor("weight", weight, ndim=2, device=x.device, last_dim_contiguous=True)
    N = weight.shape[0]
    if weight.shape[1] != K:
        raise ValueError(f"weight: expected shape [N, K] with K = {K} (the last dimension of x), got {list(weight.shape)}")
    if weight.dtype != x.dtype:
        raise TypeError(f"weight: expected dtype {x.dtype} (the dtype of x), got {weight.dtype}")
    if bias is not None:
        check_tensor("bias", bias, shape=(N,), device=x.device, contiguous=True)
        if bias.dtype != x.dtype:
            raise TypeError(f"bias: expected dtype {x.dtype} (the dtype of x), got {bias.dtype}")
    M = math.prod(x.shape[:-1])
    if out is not None:
        check_tensor("out", out, shape=(M, N), device=x.device, contiguous=True)
        if out.dtype not in (x.dtype, torch.float32):
            raise TypeError(f"out: expected dtype {x.dtype} (the dtype of x) or torch.float32, got {out.dtype}")
    return M, N, K


def _rows_overlap(t: torch.Tensor, lo: int, hi: int) -> bool:
    """Whether a row of ``t`` (2-D, or 1-D as one row; stride 1 along its last dimension) has a
    byte in ``[lo, hi)``. Rows ``r`` start at ``p + r * s``: the ones that reach into the range are
    those with ``lo - width < p + r * s < hi``, a run of ``r`` found by division, not a loop."""
    width = t.shape[-1] * t.element_size()
    rows, step = (t.shape[0], t.stride(0) * t.element_size()) if t.dim() == 2 else (1, 0)
    if rows == 0 or width == 0:
        return False
    p = t.data_ptr()
    if step <= 0:  # every row at p (a row stride of 0: an expanded row)
        return p < hi and lo < p + width
    first = max(0, (lo - width - p) // step + 1)   # smallest r with p + r * step > lo - width
    last = min(rows - 1, -((p - hi) // step) - 1)  # largest r with p + r * step < hi
    return first <= last


def _check_no_overlap(out: torch.Tensor, x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None) -> None:
    """``out`` (contiguous ``[M, N]``) must not share a byte with x, weight or bias: every kernel
    writes parts of ``out`` while other programs still read its inputs. Host arithmetic on the
    pointers only (no sync)."""
    lo = out.data_ptr()
    hi = lo + out.numel() * out.element_size()
    for name, t in (("x", x), ("weight", weight), ("bias", bias)):
        if t is not None and _rows_overlap(t, lo, hi):
            raise ValueError(f"out: expected memory that does not overlap {name}, got an out that shares bytes with {name}")


def _plain(t: torch.Tensor | None) -> torch.Tensor | None:
    return t.detach() if t is not None and t.requires_grad else t


def _needs_autograd(*tensors: torch.Tensor | None) -> bool:
    return torch.is_grad_enabled() and any(t is not None and t.requires_grad for t in tensors)


def linear(
    x: torch.Tensor,
    weight: torch.Tensor,
    bias: torch.Tensor | None = None,
    *,
    out: torch.Tensor | None = None,
    backend: str | None = None,
) -> torch.Tensor:
    """``y = x @ weight^T + bias``, fast for small M (decode steps).

    Args:
        x: ``[..., K]`` bf16 or fp16, stride 1 along K.
        weight: ``[N, K]`` in x's dtype, stride 1 along K (row stride free).
        bias: ``[N]`` in x's dtype, contiguous, or ``None``.
        out: optional contiguous ``[M, N]`` (``M`` = rows of x) in x's dtype or fp32; written
            and returned. fp32 ``out`` receives the fp32 accumulator rounded once.
        backend: ``"auto"`` / ``"triton"`` / ``"cublas"``; ``None`` reads
            ``KIMIOPS_BF16_GEMM_BACKEND`` (default ``"auto"``).

    Returns:
        ``[..., N]`` in x's dtype, or ``out``.

    With grad enabled and any input requiring grad, runs the autograd-aware
    ``torch.nn.functional.linear`` (the backend is then only checked by name; a given ``out``
    is filled from that result, computed in fp32 for an fp32 ``out``). Under
    ``no_grad``/``inference_mode`` parameters that require grad are never copied (cuBLAS takes
    them as they are, the Triton kernel and the custom ops detached views). M = 0 or N = 0
    launches nothing. ``out`` must not overlap x, weight or bias.

    Raises:
        TypeError / ValueError: naming the argument, for bad types, dtypes, shapes, strides,
            devices, backend names and an ``out`` that overlaps an input; bf16 under
            ``backend="triton"`` on CPU tensors (Triton's interpreter cannot compute bf16
            products). RuntimeError: ``backend="triton"`` on a family it does
            not support, or on CPU tensors without ``TRITON_INTERPRET=1``.
    """
    M, N, K = _check(x, weight, bias, out)
    name = _requested(backend)
    if _needs_autograd(x, weight, bias):
        if out is None:
            return F.linear(x, weight, bias)
        if out.dtype != x.dtype:  # fp32 out: the fp32 product, rounded once (into out) as on the other paths
            x, weight, bias = x.float(), weight.float(), None if bias is None else bias.float()
        return out.copy_(F.linear(x, weight, bias).reshape(M, N))
    if M == 0 or N == 0:
        return out if out is not None else x.new_empty((*x.shape[:-1], N))
    x2d = x if x.dim() == 2 else x.reshape(M, K)
    if out is not None and not torch.compiler.is_compiling():
        _check_no_overlap(out, x2d, weight, bias)
    if torch.compiler.is_compiling():
        x2d, weight, bias = _plain(x2d), _plain(weight), _plain(bias)  # the custom ops take plain tensors
        if out is not None:
            torch.ops.kimiops.linear_out(x2d, weight, bias, out, backend)
            return out
        return torch.ops.kimiops.linear(x2d, weight, bias, backend).view(*x.shape[:-1], N)
    if out is not None:
        _run(x2d, weight, bias, out, name)
        return out
    config = _config(x2d, weight, bias, x.dtype, name)
    if config is None:  # the same cuBLAS call as _cublas_linear (addmm / mm), allocating its result
        y = F.linear(x2d, weight, bias)
    else:
        y = torch.empty((M, N), dtype=x.dtype, device=x.device)
        _launch_kernel(x2d, weight, bias, y, config)
    return y if x2d is x else y.view(*x.shape[:-1], N)
