"""Which KDA implementation runs where (capability families, see :mod:`kimiops.arch`)."""

from __future__ import annotations

import torch

from kimiops.arch import GPU_FAMILIES, Backend, device_family, resolve_backend

KDA_BACKENDS = {
    "triton": Backend("triton", GPU_FAMILIES | {"cpu"}, "Triton kernels (CPU tensors: Triton interpreter)"),
    "torch": Backend("torch", None, "portable torch implementation"),
}


# head dims the chunked prefill kernels are built and tested for (tl.dot tiles of 16; K = 256 takes
# its own state tile, ``chunk_state.STATE_CONFIG_K256``); the decode kernel takes any
CHUNK_KERNEL_DIMS = (16, 32, 64, 128, 256)


def kda_backend(op: str, requested: str | None, device: torch.device, head_dims: tuple[int, int] | None = None) -> str:
    """Backend for ``op`` on ``device``: auto takes the Triton kernels on supported GPU families
    and the torch path on CPU tensors, on families without kernels, and for ``head_dims``
    ``(K, V)`` of the chunked kernels outside ``CHUNK_KERNEL_DIMS``; forcing ``"triton"`` on such
    head dims raises ``ValueError``."""
    family = device_family(device)
    dims_ok = head_dims is None or all(d in CHUNK_KERNEL_DIMS for d in head_dims)
    auto = ("triton", "torch") if family != "cpu" and dims_ok else ("torch",)
    chosen = resolve_backend(op, requested, family, KDA_BACKENDS, auto)
    if chosen == "triton" and not dims_ok:  # only a forced choice gets here
        raise ValueError(
            f"q, v: backend 'triton' of {op} supports head dims K, V in {CHUNK_KERNEL_DIMS}, got "
            f"K={head_dims[0]}, V={head_dims[1]}; use backend='torch' (or auto) for other sizes"
        )
    return chosen
