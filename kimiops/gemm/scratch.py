"""Split-K scratch for the skinny linear: fp32 partials and int32 arrival counters.

Partials need no initial value. They are cached per ``(device, stream, capacity)`` (capacity
rounded up to a power of two) and never freed or replaced, so steady-state calls allocate nothing
and a CUDA graph that captured a call keeps pointing at live memory. A buffer first needed
during capture comes from that graph's pool and stays referenced here.

Counters must be zero when a kernel starts; every kernel returns the counters it used to zero.
Each stream gets its own counter block (kernels on different streams never share counters). A
stream first seen outside a capture zeroes its block on itself, so the zero-fill is ordered
before its kernels. A stream first seen inside a capture (``torch.cuda.graph``'s capture stream)
takes one of the spare blocks zeroed ahead of time outside any capture: ``torch.cuda.graph``
synchronizes the device before capture begins, so their zero-fill has completed, and no memset
goes into the graph; graphs captured one after another without replay in between are safe. (Until
the twenty-ninth session every new stream took a spare, whose zero-fill had been queued on
whichever stream made the spares, with nothing ordering it before the new stream's kernels.)
Only when no spare exists during capture (the very first call of the process captured), or a call
needs more than :data:`COUNTER_BLOCK` counters, does the call zero fresh counters itself.

Calls on one stream are serialized by the stream, which is what makes sharing scratch between
consecutive calls safe; graphs captured on one stream must not be replayed concurrently.
"""

from __future__ import annotations

import torch
import triton

from kimiops.streams import capturing, stream_key

COUNTER_BLOCK = 1 << 14  # counters per stream: N/BLOCK_N * M/BLOCK_M output tiles
SPARE_BLOCKS = 4
_MIN_PARTIALS = 1 << 12

_partials: dict[tuple, torch.Tensor] = {}
_counters: dict[tuple, torch.Tensor] = {}
_spares: dict[torch.device, list[torch.Tensor]] = {}


def _counter_block(device: torch.device, key: tuple) -> torch.Tensor | None:
    block = _counters.get(key)
    if block is not None:
        return block
    spares = _spares.setdefault(device, [])
    if capturing(device):
        if not spares:
            return None
        block = spares.pop()
    else:
        block = torch.zeros(COUNTER_BLOCK, dtype=torch.int32, device=device)  # on this stream: ordered
        spares.extend(torch.zeros(COUNTER_BLOCK, dtype=torch.int32, device=device)
                      for _ in range(SPARE_BLOCKS - len(spares)))
    _counters[key] = block
    return block


def split_k_scratch(device: torch.device, partial_elems: int, counter_elems: int) -> tuple[torch.Tensor, torch.Tensor]:
    """fp32 partials (at least ``partial_elems``) and zeroed int32 counters (at least
    ``counter_elems``) for the current stream of ``device``."""
    key = (device, stream_key(device))
    capacity = max(_MIN_PARTIALS, triton.next_power_of_2(partial_elems))
    partials = _partials.get((*key, capacity))
    if partials is None:
        partials = _partials[(*key, capacity)] = torch.empty(capacity, dtype=torch.float32, device=device)
    counters = _counter_block(device, key) if counter_elems <= COUNTER_BLOCK else None
    if counters is None:
        counters = torch.zeros(counter_elems, dtype=torch.int32, device=device)
    return partials, counters
