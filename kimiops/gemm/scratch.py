"""Split-K scratch for the skinny linear: fp32 partials and int32 arrival counters.

Buffers are cached per ``(device, stream, kind, capacity)`` with capacities rounded up to a power
of two, and are never freed or replaced, so:

- steady-state calls allocate nothing;
- a CUDA graph that captured a call keeps pointing at live memory forever (a buffer first
  created during capture comes from the graph's pool and stays referenced here; warming up each
  shape once before capture, as serving engines do, keeps capture allocation-free);
- kernels on different streams never share counters.

Counters start at zero and every kernel returns the counters it used to zero, so a buffer is
ready for the next call on its stream without a memset. Calls on one stream are serialized by
the stream, which is what makes sharing a buffer between consecutive calls safe.
"""

from __future__ import annotations

import torch
import triton

_BUFFERS: dict[tuple, torch.Tensor] = {}
_MIN_ELEMS = 4096


def _stream_key(device: torch.device) -> int:
    if device.type == "cuda":
        return torch.cuda.current_stream(device).cuda_stream
    return 0


def _buffer(device: torch.device, kind: str, elems: int, dtype: torch.dtype, zero: bool) -> torch.Tensor:
    capacity = max(_MIN_ELEMS, triton.next_power_of_2(elems))
    key = (device, _stream_key(device), kind, capacity)
    buf = _BUFFERS.get(key)
    if buf is None:
        make = torch.zeros if zero else torch.empty
        buf = make(capacity, dtype=dtype, device=device)
        _BUFFERS[key] = buf
    return buf


def split_k_scratch(device: torch.device, partial_elems: int, counter_elems: int) -> tuple[torch.Tensor, torch.Tensor]:
    """fp32 partials (at least ``partial_elems``) and zeroed int32 counters (at least
    ``counter_elems``) for the current stream of ``device``."""
    partials = _buffer(device, "partials", partial_elems, torch.float32, zero=False)
    counters = _buffer(device, "counters", counter_elems, torch.int32, zero=True)
    return partials, counters
