"""State snapshots inside a prefill call, for prefix caching (``track_state`` / ``track_chunk_idx``).

A serving engine that caches prefixes of KDA models needs the recurrent state at a block boundary
inside an extend, not only at its end. SGLang's KDA prefill takes it as ``track_state`` (fp32,
one row per sequence) and ``track_chunk_idx`` (int32 ``[N]``: a chunk index in units of
``TRACK_CHUNK`` tokens, -1 for none); kimiops takes the same two arguments with the same meaning
(checked against SGLang's ``test_kda_track_state``: index ``j`` snapshots the state after the
sequence's first ``j * 64`` tokens, the fp32 accumulator and not a rounded copy).

Here the index may also name the sequence's end (``j * 64 == length``: the final state), and
index 0 gives the initial state. The kernels write the rows as they walk (``chunk_state.py``,
``TRACK_STEPS``); the torch path takes them from the same chunked oracle (``reference.py``).
"""

from __future__ import annotations

import torch

from kimiops.validation import INDEX_DTYPES, check_pair, check_tensor, reads_values

TRACK_CHUNK = 64  # tokens per unit of track_chunk_idx (FLA's and SGLang's chunk size)


def check_track(track_state, track_chunk_idx, state_shape: tuple, device, lengths) -> None:
    """Check a snapshot request before any launch; raises ValueError/TypeError.

    Args:
        track_state: fp32 ``state_shape`` (``[N, HV, K, V]``, or ``[N, HV, V, K]`` with
            ``state_v_first``), contiguous, on ``device``.
        track_chunk_idx: int32/int64 ``[N]`` on ``device``; values (read on CPU and with
            ``KIMIOPS_DEBUG=1``) -1 or ``0 <= j * TRACK_CHUNK <= length of sequence n``.
        lengths: a callable returning the sequences' lengths as a CPU int64 tensor ``[N]`` (only
            called when values are read).
    """
    if not check_pair("track_state", track_state, "track_chunk_idx", track_chunk_idx):
        return
    check_tensor("track_state", track_state, shape=state_shape, dtypes=(torch.float32,), device=device,
                 contiguous=True)
    check_tensor("track_chunk_idx", track_chunk_idx, shape=state_shape[:1], dtypes=INDEX_DTYPES, device=device,
                 contiguous=True)
    if reads_values(track_chunk_idx) and track_chunk_idx.numel():
        idx = track_chunk_idx.detach().cpu().to(torch.int64)
        limit = torch.div(lengths(), TRACK_CHUNK, rounding_mode="floor")
        bad = (idx < -1) | (idx > limit)
        if bool(bad.any()):
            n = int(bad.nonzero()[0, 0])
            raise ValueError(f"track_chunk_idx: expected -1 or a chunk of {TRACK_CHUNK} tokens within the sequence "
                             f"(0 <= j <= length // {TRACK_CHUNK}), got {int(idx[n])} for sequence {n} of "
                             f"{int(lengths()[n])} tokens")
