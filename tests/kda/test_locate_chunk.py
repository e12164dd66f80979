"""Stage 1's search of a varlen chunk slot's sequence (``chunk_intra._locate_chunk``: a binary search over
``cu_seqlens`` that loops while its range holds more than one sequence), through a one-call kernel
(interpreter on CPU, the GPU when present): every slot of batches of 1-300 sequences, zero-length ones
included, gets its sequence's rows; on malformed ``cu_seqlens`` (which only ``KIMIOPS_DEBUG=1`` rejects
on the GPU) the search still ends."""

import random

import pytest
import torch
import triton
import triton.language as tl

from kimiops.kda.kernels.chunk_intra import _locate_chunk
from kimiops.kda.kernels.chunk_layout import CHUNK_SIZE, varlen_slots


@triton.jit
def _locate_kernel(cu_seqlens, starts, lengths, done, N, C: tl.constexpr):
    pid = tl.program_id(0)
    start, length = _locate_chunk(pid, cu_seqlens, 0, N, C, 0, True)
    tl.store(starts + pid, start)
    tl.store(lengths + pid, length)
    tl.store(done + pid, 1)


def _locate(cu: list[int], device) -> tuple[list[int], list[int], list[int]]:
    """``(first token, rows, 1 once the program ended)`` per chunk slot of a varlen call with
    boundaries ``cu``."""
    N = len(cu) - 1
    slots = varlen_slots(max(cu[-1], 0), N)
    starts, lengths, done = (torch.zeros(slots, dtype=torch.int32, device=device) for _ in range(3))
    _locate_kernel[(slots,)](torch.tensor(cu, dtype=torch.int32, device=device), starts, lengths, done, N,
                             C=CHUNK_SIZE)
    return starts.tolist(), lengths.tolist(), done.tolist()


def _expected(cu: list[int]) -> dict[int, tuple[int, int]]:
    """The slots that hold rows: sequence ``n``'s chunk ``c`` in slot ``cu[n] // C + n + c``, its first
    token ``cu[n] + c C`` and ``min(C, len_n - c C)`` rows (``chunk_layout.varlen_slots``)."""
    C, out = CHUNK_SIZE, {}
    for n in range(len(cu) - 1):
        for c in range(-(-(cu[n + 1] - cu[n]) // C)):
            out[cu[n] // C + n + c] = (cu[n] + c * C, min(C, cu[n + 1] - cu[n] - c * C))
    return out


@pytest.mark.parametrize("N", [1, 2, 3, 5, 16, 33, 300])
def test_every_slot_gets_its_sequence_rows(device, N):
    rng = random.Random(N)
    lens = [rng.choice([0, 0, 1, 31, 32, 33, 64, 65, rng.randint(0, 200)]) for _ in range(N)]
    cu = [0]
    for n in lens:
        cu.append(cu[-1] + n)
    starts, lengths, _ = _locate(cu, device)
    expected = _expected(cu)
    for slot, (start, rows) in enumerate(zip(starts, lengths)):
        if slot in expected:
            assert (start, rows) == expected[slot], (slot, lens)
        else:
            assert rows <= 0, (slot, lens)  # an idle slot: stage 1 writes nothing there
    assert sum(r for r in lengths if r > 0) == cu[-1]


@pytest.mark.parametrize("seed", range(4))
def test_search_ends_on_malformed_boundaries(device, seed):
    """Decreasing or out-of-range boundaries give rows that mean nothing, but every program returns:
    each step of the search shrinks its range."""
    rng = random.Random(seed)
    N = rng.choice([2, 7, 40])
    cu = [0] + [rng.randint(-50, 400) for _ in range(N - 1)] + [300]
    assert all(_locate(cu, device)[2])  # every slot's program reached its end
