"""CUDA stream state that scratch caches and dispatch decisions key on."""

from __future__ import annotations

import torch


def stream_key(device: torch.device) -> int | None:
    """The current stream of ``device`` as a cache key (``None`` off CUDA): work on one stream is
    ordered, so scratch may be shared by the calls of one stream and never across streams."""
    return torch.cuda.current_stream(device).cuda_stream if device.type == "cuda" else None


def capturing(device: torch.device) -> bool:
    """Whether work issued now on ``device`` is being captured into a CUDA graph."""
    return device.type == "cuda" and torch.cuda.is_current_stream_capturing()
