"""Input validation shared by every public op.

Metadata (shapes, dtypes, devices, strides, flags) is checked on every call and costs no device
work. Checks that must read the *values* of a tensor (index ranges, ``cu_seqlens`` order) would
force a host sync for CUDA tensors, so they run only when ``KIMIOPS_DEBUG=1`` is set, and always
for CPU tensors (where reading is free).

Every error is a ``ValueError`` or ``TypeError`` naming the argument, what was expected and what
was given.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from kimiops.env import env_var

FLOAT_DTYPES = (torch.float16, torch.bfloat16, torch.float32)
INDEX_DTYPES = (torch.int32, torch.int64)
LOWER_BOUND_RANGE = (-5.0, 0.0)  # the lower-bound gate's lower_bound must lie in [-5, 0)


def debug_enabled() -> bool:
    """True when ``KIMIOPS_DEBUG=1``: value checks on CUDA tensors (they sync the host)."""
    return env_var("KIMIOPS_DEBUG") == "1"


def reads_values(t: torch.Tensor) -> bool:
    """Whether value checks may read ``t`` now: always on CPU, on CUDA only in debug mode,
    never while ``torch.compile`` traces (fake tensors have no values)."""
    if torch.compiler.is_compiling():
        return False
    return t.device.type == "cpu" or debug_enabled()


def _dtype_names(dtypes: Sequence[torch.dtype]) -> str:
    return "/".join(str(d).replace("torch.", "") for d in dtypes)


def _shape_matches(actual: torch.Size, want: Sequence[int | None]) -> bool:
    if len(actual) != len(want):
        return False
    for w, a in zip(want, actual):
        if w is not None and w != a:
            return False
    return True


def check_tensor(
    name: str,
    t: object,
    *,
    shape: Sequence[int | None] | None = None,
    ndim: int | Sequence[int] | None = None,
    dtypes: Sequence[torch.dtype] | None = None,
    device: torch.device | None = None,
    last_dim_contiguous: bool = False,
    contiguous: bool = False,
) -> torch.Tensor:
    """Check a tensor argument's metadata; ``None`` entries of ``shape`` match any size."""
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{name}: expected a torch.Tensor, got {type(t).__name__}")
    if ndim is not None:
        allowed = (ndim,) if isinstance(ndim, int) else tuple(ndim)
        if t.dim() not in allowed:
            raise ValueError(
                f"{name}: expected {' or '.join(map(str, allowed))} dimensions, got shape {tuple(t.shape)}"
            )
    if shape is not None and not _shape_matches(t.shape, shape):
        want = "[" + ", ".join("*" if s is None else str(s) for s in shape) + "]"
        raise ValueError(f"{name}: expected shape {want}, got {list(t.shape)}")
    if dtypes is not None and t.dtype not in dtypes:
        raise TypeError(f"{name}: expected dtype {_dtype_names(dtypes)}, got {t.dtype}")
    if device is not None and t.device != device:
        raise ValueError(f"{name}: expected a tensor on {device}, got one on {t.device}")
    if contiguous and not t.is_contiguous():
        raise ValueError(f"{name}: expected a contiguous tensor, got strides {t.stride()}")
    if last_dim_contiguous and t.dim() > 0 and t.shape[-1] > 1 and t.stride(-1) != 1:
        raise ValueError(f"{name}: expected the last dimension contiguous (stride 1), got strides {t.stride()}")
    return t


def check_pair(name_a: str, a: object, name_b: str, b: object) -> bool:
    """Two arguments that only work together: both given (True) or neither (False); raises a
    ``ValueError`` naming the missing one otherwise."""
    if (a is None) != (b is None):
        missing, given = (name_b, name_a) if b is None else (name_a, name_b)
        raise ValueError(f"{missing}: needed with {given}, got None")
    return a is not None


def check_cu_seqlens(
    cu_seqlens: object, total_tokens: int, device: torch.device, name: str = "cu_seqlens", allow_padding: bool = False
) -> torch.Tensor:
    """``[N+1]`` int32/int64 on ``device``; values (start 0, non-decreasing, last == total, or
    ``<= total`` with ``allow_padding``: trailing padding rows) when readable."""
    t = check_tensor(name, cu_seqlens, ndim=1, dtypes=INDEX_DTYPES, device=device, contiguous=True)
    if t.numel() < 1:
        raise ValueError(f"{name}: expected at least one entry [N+1], got shape {list(t.shape)}")
    if reads_values(t):
        v = t.detach().cpu()
        if int(v[0]) != 0:
            raise ValueError(f"{name}: expected {name}[0] == 0, got {int(v[0])}")
        if v.numel() > 1 and bool((v[1:] < v[:-1]).any()):
            raise ValueError(f"{name}: expected non-decreasing values, got {v.tolist()[:16]}")
        last = int(v[-1])
        if last > total_tokens or (last != total_tokens and not allow_padding):
            rel = "<=" if allow_padding else "=="
            raise ValueError(f"{name}: expected {name}[-1] {rel} {total_tokens} (the token count), got {last}")
    return t


def check_indices(
    name: str, idx: object, count: int, num_slots: int, device: torch.device, allow_2d: bool = False
) -> torch.Tensor:
    """``[count]`` int32/int64 slot indices on ``device``, contiguous (the kernels read entry ``n``
    at offset ``n``; with ``allow_2d`` also ``[count, T_max]``, stride 1 along T_max); values in
    ``[-1, num_slots)`` when readable."""
    if allow_2d and isinstance(idx, torch.Tensor) and idx.dim() == 2:
        t = check_tensor(name, idx, shape=(count, None), dtypes=INDEX_DTYPES, device=device, last_dim_contiguous=True)
    else:
        t = check_tensor(name, idx, shape=(count,), dtypes=INDEX_DTYPES, device=device, contiguous=True)
    if reads_values(t) and t.numel() > 0:
        v = t.detach().cpu()
        lo, hi = int(v.min()), int(v.max())
        if lo < -1 or hi >= num_slots:
            raise ValueError(
                f"{name}: expected values in [-1, {num_slots}) (-1 = padding), got range [{lo}, {hi}]"
            )
    return t


def check_lower_bound(lower_bound: object) -> float | None:
    if lower_bound is None:
        return None
    if isinstance(lower_bound, bool) or not isinstance(lower_bound, (int, float)):
        raise TypeError(f"lower_bound: expected a float in [-5, 0) or None, got {type(lower_bound).__name__}")
    lb = float(lower_bound)
    low, high = LOWER_BOUND_RANGE
    if not (low <= lb < high):
        raise ValueError(f"lower_bound: expected a value in [{low:g}, {high:g}), got {lb}")
    return lb
