"""Validation and normalization of the arguments shared by ``chunk_kda`` and ``fused_recurrent_kda``.

Metadata is checked on every call; value checks (index ranges, ``cu_seqlens``) run for CPU
tensors always and for CUDA tensors only with ``KIMIOPS_DEBUG=1`` (see :mod:`kimiops.validation`).
"""

from __future__ import annotations

import math

from collections import OrderedDict
from dataclasses import dataclass

import torch

from kimiops.validation import (
    FLOAT_DTYPES,
    INDEX_DTYPES,
    check_cu_seqlens,
    check_indices,
    check_lower_bound,
    check_tensor,
    debug_enabled,
    reads_values,
)

GATE_NONE, GATE_SOFTPLUS, GATE_LOWER_BOUND = "none", "softplus", "lower_bound"
STATE_DTYPES = (torch.float32,)
POOL_DTYPES_DECODE = (torch.float32, torch.bfloat16)


@dataclass(frozen=True)
class KDAShapes:
    """Sizes of one KDA call: ``B, T`` batch/tokens, ``H`` q/k heads, ``HV`` value heads,
    ``K, V`` head dims, ``N`` sequences, ``gate`` one of none/softplus/lower_bound."""

    B: int
    T: int
    H: int
    HV: int
    K: int
    V: int
    N: int
    scale: float
    gate: str
    lower_bound: float | None
    pool: bool

    def state_shape(self, count: int, state_v_first: bool) -> tuple[int, int, int, int]:
        return (count, self.HV, self.V, self.K) if state_v_first else (count, self.HV, self.K, self.V)


# Calls whose checks read no tensor values (non-CPU tensors without KIMIOPS_DEBUG) depend only on
# metadata, so a decode loop that repeats one shape pays for the checks once: the result is cached
# under the arguments' metadata (shape, strides, dtype, device of every tensor, and the flags).
_CACHE_SIZE = 256
_validated: OrderedDict = OrderedDict()


def _meta(t):
    if isinstance(t, torch.Tensor):
        return (t.shape, t.stride(), t.dtype, t.device)
    if t is None:
        return None
    if isinstance(t, (bool, int, float, str, tuple)):
        return (t.__class__, t)  # True == 1 and hashes alike: the type keeps them apart
    return ("object", type(t))  # never valid for a KDA argument: the full check raises, nothing is cached


def meta_key(*args) -> tuple:
    """Metadata of call arguments (tensors: shape, strides, dtype, device; plain values as they
    are): what a check that reads no tensor values depends on."""
    return tuple(map(_meta, args))


def check_kda_args(
    q, k, v, g, beta, scale, initial_state, use_gate_in_kernel, A_log, dt_bias, lower_bound,
    state_v_first, cu_seqlens, indices, indices_name: str, pool_dtypes=STATE_DTYPES, allow_padded_tokens: bool = False,
    spec_indices: bool = False, num_accepted=None, state_name: str = "initial_state", cu_name: str = "cu_seqlens",
    pad_slot_id: int = -1,
) -> KDAShapes:
    """Check every argument of a KDA call and return its sizes; raises ValueError/TypeError.
    ``indices_name``, ``state_name``, ``cu_name``: the caller's names of the pool indices, the
    state and ``cu_seqlens``, used in error messages.

    ``spec_indices``: the pool indices may be ``[N, T_max]`` (speculative verification, decode),
    with ``num_accepted`` (``num_accepted_tokens``, ``[N]``) optional beside them.
    ``pad_slot_id``: indices ``<=`` it are padding and may repeat (a value check: CPU tensors and
    debug mode only, so it is not part of the memo key).

    Metadata-only outcomes are memoized (see ``_validated``); calls on CPU tensors, in debug
    mode or under ``torch.compile`` tracing are always checked in full.
    """
    cacheable = isinstance(q, torch.Tensor) and q.device.type != "cpu" and not debug_enabled() \
        and not torch.compiler.is_compiling()
    if cacheable:
        key = meta_key(q, k, v, g, beta, scale, initial_state, use_gate_in_kernel, A_log, dt_bias, lower_bound,
                       state_v_first, cu_seqlens, indices, indices_name, pool_dtypes, allow_padded_tokens,
                       spec_indices, num_accepted, state_name, cu_name)
        hit = _validated.get(key)
        if hit is not None:
            return hit
    shapes = _check_kda_args(q, k, v, g, beta, scale, initial_state, use_gate_in_kernel, A_log, dt_bias,
                             lower_bound, state_v_first, cu_seqlens, indices, indices_name, pool_dtypes,
                             allow_padded_tokens, spec_indices, num_accepted, state_name, cu_name, pad_slot_id)
    if cacheable:
        _validated[key] = shapes
        if len(_validated) > _CACHE_SIZE:
            _validated.popitem(last=False)
    return shapes


def _check_kda_args(
    q, k, v, g, beta, scale, initial_state, use_gate_in_kernel, A_log, dt_bias, lower_bound,
    state_v_first, cu_seqlens, indices, indices_name, pool_dtypes, allow_padded_tokens, spec_indices, num_accepted,
    state_name, cu_name, pad_slot_id=-1,
) -> KDAShapes:
    check_tensor("q", q, ndim=4, dtypes=FLOAT_DTYPES, last_dim_contiguous=True)
    device = q.device
    B, T, H, K = q.shape
    check_tensor("k", k, shape=(B, T, H, K), dtypes=(q.dtype,), device=device, last_dim_contiguous=True)
    check_tensor("v", v, ndim=4, dtypes=(q.dtype,), device=device, last_dim_contiguous=True)
    if v.shape[0] != B or v.shape[1] != T:
        raise ValueError(f"v: expected shape [{B}, {T}, HV, V] (batch and tokens of q), got {list(v.shape)}")
    HV, V = v.shape[2], v.shape[3]
    if H == 0 or HV % H != 0:
        raise ValueError(f"v: expected a number of value heads HV that is a multiple of H={H}, got HV={HV}")
    check_tensor("g", g, shape=(B, T, HV, K), dtypes=FLOAT_DTYPES, device=device, last_dim_contiguous=True)
    check_tensor("beta", beta, shape=(B, T, HV), dtypes=FLOAT_DTYPES, device=device)
    if K == 0 or V == 0:
        raise ValueError(f"q, v: expected head dims K, V >= 1, got K={K}, V={V}")
    if scale is not None and (isinstance(scale, bool) or not isinstance(scale, (int, float))):
        raise TypeError(f"scale: expected a float or None, got {type(scale).__name__}")
    scale = float(K**-0.5 if scale is None else scale)
    if not math.isfinite(scale):
        raise ValueError(f"scale: expected a finite float, got {scale}")

    lb = check_lower_bound(lower_bound)
    if use_gate_in_kernel:
        gate = GATE_SOFTPLUS if lb is None else GATE_LOWER_BOUND
        if gate == GATE_SOFTPLUS and A_log is None:
            raise ValueError("A_log: the softplus gate (use_gate_in_kernel=True, lower_bound=None) needs A_log [HV], got None")
    else:
        gate = GATE_NONE
    if A_log is not None:
        check_tensor("A_log", A_log, shape=(HV,), dtypes=FLOAT_DTYPES, device=device, contiguous=True)
    if dt_bias is not None:
        check_tensor("dt_bias", dt_bias, dtypes=FLOAT_DTYPES, device=device, contiguous=True)
        if dt_bias.numel() != HV * K or dt_bias.shape not in ((HV * K,), (HV, K)):
            raise ValueError(f"dt_bias: expected shape [{HV * K}] or [{HV}, {K}], got {list(dt_bias.shape)}")

    if cu_seqlens is not None:
        if B != 1:
            raise ValueError(f"q: expected batch size 1 with cu_seqlens (varlen), got B={B}")
        check_cu_seqlens(cu_seqlens, T, device, name=cu_name, allow_padding=allow_padded_tokens)
        N = cu_seqlens.shape[0] - 1
    else:
        N = B

    pool = indices is not None
    if num_accepted is not None and not (pool and isinstance(indices, torch.Tensor) and indices.dim() == 2):
        got = "no indices" if indices is None else list(getattr(indices, "shape", ()))
        raise ValueError(f"num_accepted_tokens: needs {indices_name} of shape [N, T_max] (speculative "
                         f"verification), got {got}")
    if pool:
        if initial_state is None:
            raise ValueError(f"{state_name}: {indices_name} given, so a state pool [slots, HV, *, *] is expected, "
                             "got None")
        check_tensor(state_name, initial_state, ndim=4, dtypes=pool_dtypes, device=device, contiguous=True)
        want = (HV, V, K) if state_v_first else (HV, K, V)
        if tuple(initial_state.shape[1:]) != want:
            layout = "[slots, HV, V, K]" if state_v_first else "[slots, HV, K, V]"
            raise ValueError(f"{state_name}: expected a pool {layout} = [*, {', '.join(map(str, want))}], "
                             f"got {list(initial_state.shape)}")
        check_indices(indices_name, indices, N, initial_state.shape[0], device, allow_2d=spec_indices)
        if reads_values(indices):
            real = indices[indices > pad_slot_id]
            if real.numel() != real.unique().numel():
                padding = "-1" if pad_slot_id == -1 else f"-1 and {pad_slot_id}"
                raise ValueError(f"{indices_name}: expected distinct slots for distinct sequences ({padding} may "
                                 "repeat), got duplicates")
        if indices.dim() == 2:
            _check_speculative(indices, indices_name, num_accepted, N, T, cu_seqlens, device)
    elif initial_state is not None:
        want = (N, HV, V, K) if state_v_first else (N, HV, K, V)
        check_tensor(state_name, initial_state, shape=want, dtypes=STATE_DTYPES, device=device, contiguous=True)
    return KDAShapes(B, T, H, HV, K, V, N, scale, gate, lb, pool)


PAD_SLOT_IDS = (-1, 0)


def check_pad_slot_id(pad_slot_id: object, indices, indices_name: str) -> None:
    """``pad_slot_id``: -1 (padding is -1 only, SGLang's and FLA's convention), or 0 (also slot 0,
    vLLM's null block ``NULL_BLOCK_ID``, which vLLM's own decode kernels skip); 0 needs pool
    indices."""
    if isinstance(pad_slot_id, bool) or not isinstance(pad_slot_id, int):
        raise TypeError(f"pad_slot_id: expected an int, got {type(pad_slot_id).__name__}")
    if pad_slot_id not in PAD_SLOT_IDS:
        raise ValueError(f"pad_slot_id: expected -1 or 0, got {pad_slot_id}")
    if pad_slot_id == 0 and indices is None:
        raise ValueError(f"pad_slot_id: 0 marks slot 0 of a state pool as padding and needs {indices_name}, got None")


def sequence_lengths(N: int, T: int, cu_seqlens) -> torch.Tensor:
    """Token count of each of the ``N`` sequences, CPU int64 ``[N]``: ``T`` each without
    ``cu_seqlens``, else its differences (a read of ``cu_seqlens``: a sync on a GPU)."""
    if cu_seqlens is None:
        return torch.full((N,), T, dtype=torch.int64)
    bounds = cu_seqlens.detach().cpu().to(torch.int64)
    return bounds[1:] - bounds[:-1]


def _check_speculative(indices, indices_name, num_accepted, N, T, cu_seqlens, device):
    """``[N, T_max]`` indices: every sequence has at most ``T_max`` tokens, and ``num_accepted``
    (``[N]``, optional) lies in ``[1, T_max]`` (values read on CPU and in debug mode)."""
    t_max = indices.shape[1]
    if num_accepted is not None:
        check_tensor("num_accepted_tokens", num_accepted, shape=(N,), dtypes=INDEX_DTYPES, device=device,
                     contiguous=True)
    if not reads_values(indices):
        return
    longest = int(sequence_lengths(N, T, cu_seqlens).max()) if N else 0
    if longest > t_max:
        raise ValueError(f"{indices_name}: expected at least as many columns as the longest sequence has tokens "
                         f"({longest}), got shape {list(indices.shape)}")
    if num_accepted is not None and N:
        acc = num_accepted.detach().cpu()
        lo, hi = int(acc.min()), int(acc.max())
        if lo < 1 or hi > t_max:
            raise ValueError(f"num_accepted_tokens: expected values in [1, {t_max}] (columns of {indices_name}), "
                             f"got range [{lo}, {hi}]")
