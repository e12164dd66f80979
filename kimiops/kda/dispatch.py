"""Which KDA implementation runs where (capability families, see :mod:`kimiops.arch`)."""

from __future__ import annotations

import torch

from kimiops.arch import GPU_FAMILIES, Backend, device_family, resolve_backend

KDA_BACKENDS = {
    "triton": Backend("triton", GPU_FAMILIES | {"cpu"}, "Triton kernels (CPU tensors: Triton interpreter)"),
    "torch": Backend("torch", None, "portable torch implementation"),
}


def kda_backend(op: str, requested: str | None, device: torch.device) -> str:
    """Backend for ``op`` on ``device``: auto takes the Triton kernels on supported GPU families
    and the torch path on CPU tensors and on families without kernels."""
    family = device_family(device)
    auto = ("torch",) if family == "cpu" else ("triton", "torch")
    return resolve_backend(op, requested, family, KDA_BACKENDS, auto)
