"""Scratch buffers of the KDA kernels, reused across calls.

A buffer is keyed by ``(device, stream, name, dtype, dims)`` where ``dims`` are the sizes that do
not grow with the problem (heads, head dims, chunk size). The growing size (the number of chunk
slots) is a *capacity*: a call needing at most the capacity gets a view of the cached buffer; a
call needing more allocates a new buffer with at least twice the capacity. The replaced buffer
is not freed but *retired* (kept alive) until :func:`empty_cache`, so a CUDA graph captured
earlier on the old buffer keeps valid memory.

Concurrency: the stream is part of the key, so two streams calling at the same time get
different buffers (kernels on one stream are ordered, so reuse on one stream is safe). The cache
dictionary is guarded by a lock, so two host threads may call at once. A CUDA graph keeps the
buffers of its capture stream, which every ``torch.cuda.graph`` without ``stream=`` shares: graphs
captured on one stream must not be replayed concurrently (README, ``kimiops.empty_cache()``).

``empty_cache()`` drops every cached and retired buffer (the lead re-exports it as
``kimiops.empty_cache``); call it only when no captured graph that used them will replay again.
"""

from __future__ import annotations

import threading

import torch

from kimiops.streams import capturing, stream_key

__all__ = ["get_buffer", "empty_cache", "cached_bytes"]

_LOCK = threading.Lock()
# key -> [buffer, size of dimension 1 last served, the view served for it]: a call that repeats the
# last size gets the same view object back (slicing a view costs ~1.5 us of host time per buffer;
# a prefill call takes 6-9 buffers)
_CACHE: dict[tuple, list] = {}
_RETIRED: list[torch.Tensor] = []


def get_buffer(
    name: str, device: torch.device, dtype: torch.dtype, lead: int, dims: tuple[int, ...], grow_dim: int,
    zeroed: bool = False,
) -> torch.Tensor:
    """A ``[lead, grow_dim, *dims]`` scratch tensor (uninitialized) for the current stream.

    Args:
        name: which buffer (one kernel pipeline may hold several).
        device, dtype: of the buffer.
        lead: leading size that is part of the key (e.g. the number of value heads).
        dims: trailing sizes that are part of the key.
        grow_dim: size of dimension 1, served from a cached capacity (a view when smaller).
        zeroed: fill a newly allocated buffer with zeros (once; for counters that the kernels
            leave at zero after every call). A buffer allocated during a CUDA-graph capture is
            zeroed only when that graph replays, so until an eager call on its stream zeroes it
            (the first one does), every capture that serves it puts a zero-fill in its own graph:
            a graph captured later may replay first.
    Returns:
        A view ``buf[:, :grow_dim]`` of shape ``[lead, grow_dim, *dims]``; contiguous rows of one
        lead index are ``buf.stride(0)`` elements apart (use the stride, not the view's size).
    """
    if not isinstance(device, torch.device):
        device = torch.device(device)
    if device.type == "cuda" and device.index is None:
        device = torch.device("cuda", torch.cuda.current_device())
    key = (device, stream_key(device), name, dtype, lead, tuple(dims))
    with _LOCK:
        entry = _CACHE.get(key)
        if entry is not None and entry[1] == grow_dim and not entry[3]:
            return entry[2]
        if entry is None or entry[0].shape[1] < grow_dim:
            cap = max(grow_dim, 1) if entry is None else max(grow_dim, 2 * entry[0].shape[1])
            if entry is not None:
                _RETIRED.append(entry[0])
            buf = (torch.zeros if zeroed else torch.empty)((lead, cap, *dims), dtype=dtype, device=device)
            # [buffer, grow_dim last served, its view, zero-fill not yet run outside a capture]
            entry = _CACHE[key] = [buf, None, None, zeroed and capturing(device)]
        elif entry[3]:  # a zeroed buffer first filled inside a capture (see ``zeroed``)
            entry[0].zero_()  # in a capture: into this graph too; else on this stream, before the call's kernels
            entry[3] = capturing(device)
        view = entry[0][:, :grow_dim]
        entry[1], entry[2] = grow_dim, view
        return view


def empty_cache() -> None:
    """Release every cached scratch buffer (and the retired ones kept for captured graphs)."""
    with _LOCK:
        _CACHE.clear()
        _RETIRED.clear()


def cached_bytes() -> int:
    """Bytes held by the cache (live + retired); for tests and diagnostics."""
    with _LOCK:
        return sum(t.numel() * t.element_size() for t in [e[0] for e in _CACHE.values()] + _RETIRED)
