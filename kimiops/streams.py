"""CUDA device and stream state that launches, scratch caches and dispatch decisions key on."""

from __future__ import annotations

import contextlib
import threading

import torch


def on_device(device: torch.device):
    """A context in which ``device`` is the current CUDA device, for kernel launches: Triton launches
    on the current device's stream, so tensors on another GPU need it switched (a no-op context off
    CUDA and when ``device`` is already current, the usual case, which costs one device query)."""
    if device.type != "cuda" or device.index is None or device.index == torch.cuda.current_device():
        return contextlib.nullcontext()
    return torch.cuda.device(device.index)


def stream_key(device: torch.device) -> int | None:
    """The current stream of ``device`` as a cache key (``None`` off CUDA): work on one stream is
    ordered, so scratch may be shared by the calls of one stream and never across streams."""
    if device.type != "cuda":
        return None
    # the raw cudaStream_t of torch.cuda.current_stream(device).cuda_stream, without building the
    # Stream object (0.09 against ~1 us of host time per query)
    index = device.index if device.index is not None else torch.cuda.current_device()
    return torch._C._cuda_getCurrentRawStream(index)


def capturing(device: torch.device) -> bool:
    """Whether work issued now on ``device`` is being captured into a CUDA graph."""
    return device.type == "cuda" and torch.cuda.is_current_stream_capturing()


_FORK_LOCK = threading.Lock()
_FORKS: dict[tuple, tuple] = {}


def forked_stream(device: torch.device, high_priority: bool) -> tuple["torch.cuda.Stream", "torch.cuda.Event"]:
    """A second stream paired with the current stream of ``device``, and an event for handing work
    between them (``event.record(a); b.wait_event(event)``; one event serves any number of hand-offs
    because a wait takes the event's state at the time it is issued).

    One pair per (device, current stream, priority), created on first use and kept, so repeated calls
    (and graph captures) reuse it. A kernel pipeline forks onto it and must join back (the current
    stream waits on it) before returning: then scratch keyed by the current stream stays safe, and
    graph capture sees a closed fork. ``high_priority``: the block scheduler prefers its kernels'
    CTAs over those of lower-priority streams when both wait for room (eager launches; a CUDA graph
    replays with the priority of the stream it is launched into).
    """
    key = (device, stream_key(device), high_priority)
    with _FORK_LOCK:
        pair = _FORKS.get(key)
        if pair is None:
            # priorities are clamped to the device's range; -100 asks for the highest
            stream = torch.cuda.Stream(device=device, priority=-100 if high_priority else 0)
            pair = (stream, torch.cuda.Event())
            _FORKS[key] = pair
    return pair
