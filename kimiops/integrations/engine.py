"""What the serving-engine adapters (:mod:`~kimiops.integrations.sglang`,
:mod:`~kimiops.integrations.vllm`) share: which devices kimiops serves, which keywords of a call ask
for something kimiops does not do, and importing the engine's module with an error that says what
is missing."""

from __future__ import annotations

import importlib
from types import ModuleType

import torch

from kimiops.arch import GPU_FAMILIES, device_family

__all__ = ["serves", "serves_current_gpu", "unsupported_keyword", "unserved_reason", "engine_module", "flat",
           "FLA_CHUNK_TABLES"]

# FLA's chunk tables, which engines build on the host from cu_seqlens for FLA's prefill kernels
# (``chunk_indices``: (sequence, chunk) per chunk; ``chunk_offsets``: chunks before each sequence) and pass
# along; kimiops finds each chunk's sequence on the device, so the adapters ignore them
FLA_CHUNK_TABLES = frozenset({"chunk_indices", "chunk_offsets"})


def serves(device: torch.device) -> bool:
    """kimiops serves CPU tensors (its torch path) and GPUs of the families it has kernels for;
    the adapters hand everything else back to the engine's own kernels."""
    return device.type == "cpu" or (device.type == "cuda" and device_family(device) in GPU_FAMILIES)


def serves_current_gpu() -> bool:
    """Whether this process has a CUDA GPU (its current device) that kimiops has kernels for."""
    return torch.cuda.is_available() and serves(torch.device("cuda", torch.cuda.current_device()))


def unsupported_keyword(kwargs: dict, ignored: frozenset = frozenset()) -> str | None:
    """Name of the first keyword of an engine's call that asks for something kimiops does not do:
    a value other than ``None``/``False`` under a name not in ``ignored`` (keywords that only
    steer the engine's own kernels, or that the adapter handles itself); else ``None``."""
    for name, value in kwargs.items():
        if name in ignored or value is None or value is False:
            continue
        return name
    return None


def unserved_reason(device: torch.device, kwargs: dict, ignored: frozenset = frozenset()) -> str | None:
    """Why an adapter hands a call back to the engine's own kernel: ``"device family <family>"`` for
    a device kimiops has no kernels for, ``"keyword <name>"`` for a keyword that asks for something
    kimiops does not do (:func:`unsupported_keyword`); ``None`` when kimiops takes the call."""
    if not serves(device):
        return f"device family {device_family(device)}"
    name = unsupported_keyword(kwargs, ignored)
    return None if name is None else f"keyword {name}"


def flat(x: torch.Tensor | None) -> torch.Tensor | None:
    """``x`` as one contiguous dimension (``A_log``, ``dt_bias``: engines keep them as
    ``[1, 1, HV, 1]`` or ``[HV * K]``); a contiguous one-dimensional tensor and ``None`` as they
    are (an eager call pays for every view op)."""
    return x if x is None or (x.dim() == 1 and x.is_contiguous()) else x.reshape(-1).contiguous()


def packed_token_views(mixed_qkv: torch.Tensor, H: int, HV: int, K: int, V: int):
    """q, k ``[B, 1, H, K]`` and v ``[B, 1, HV, V]`` as views of ``mixed_qkv`` ``[B, 2 H K + HV V]``
    (one token per request, each row q, k, v side by side, stride 1 along the row), one
    ``as_strided`` each: an eager call pays for every view op (a split and two reshapes per tensor
    cost 40-70 us more per call on the H200 host, run 9 of ``logs_h200_20261201g``)."""
    B, row, base = mixed_qkv.shape[0], mixed_qkv.stride(0), mixed_qkv.storage_offset()
    q = mixed_qkv.as_strided((B, 1, H, K), (row, row, K, 1), base)
    k = mixed_qkv.as_strided((B, 1, H, K), (row, row, K, 1), base + H * K)
    v = mixed_qkv.as_strided((B, 1, HV, V), (row, row, V, 1), base + 2 * H * K)
    return q, k, v


def last_dim_dense(x: torch.Tensor) -> torch.Tensor:
    """``x`` with a contiguous last dimension (a copy only where it is not): engines' convolutions
    may hand q, k, v over as transposed views, which kimiops's kernels do not take."""
    return x if x.stride(-1) == 1 else x.contiguous()


def dense(x: torch.Tensor | None) -> torch.Tensor | None:
    """``x`` contiguous (a copy only where it is not). For the small index tensors engines may
    pass as strided views (vLLM's own decode kernels take a stride for their slot indices, e.g.
    a column of its ``[N, T_max]`` table), which kimiops's kernels read at offset ``n``."""
    return x if x is None or x.is_contiguous() else x.contiguous()


def engine_module(name: str, integration: str, requirement: str) -> ModuleType:
    """``importlib.import_module(name)``; an ImportError naming ``integration`` (the adapter) and
    ``requirement`` (the engine releases it supports) when the engine is not there."""
    try:
        return importlib.import_module(name)
    except ImportError as err:
        raise ImportError(f"{integration} needs {name} ({requirement}): {err}") from err
