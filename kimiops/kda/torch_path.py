"""Portable torch implementation of the KDA ops (CPU tensors, and any GPU family without kernels).

It preprocesses inputs with :mod:`kimiops.kda.gate` and runs the fp32 versions of the oracles in
:mod:`kimiops.kda.reference` (the chunked form for prefill, the recurrence for decode), handling
state pools around them.
"""

from __future__ import annotations

import torch

from kimiops.kda.args import GATE_NONE, KDAShapes, sequence_lengths
from kimiops.kda.gate import beta_from_logits, kda_gate, l2norm
from kimiops.kda.reference import naive_chunk_kda, naive_recurrent_kda
from kimiops.kda.track import TRACK_CHUNK


def preprocess(q, k, g, beta, shapes: KDAShapes, use_qk_l2norm, use_beta_sigmoid, A_log, dt_bias,
               allow_neg_eigval=False):
    """fp32 (fp64 stays fp64) q, k, g, beta after the optional L2 norm, gate and sigmoid."""
    dt = torch.float64 if q.dtype == torch.float64 else torch.float32
    q, k, beta = q.to(dt), k.to(dt), beta.to(dt)
    if use_qk_l2norm:
        q, k = l2norm(q), l2norm(k)
    if use_beta_sigmoid:
        beta = beta_from_logits(beta, allow_neg_eigval)
    if shapes.gate == GATE_NONE:
        g = g.to(dt)
    else:
        g = kda_gate(g, A_log, dt_bias, shapes.lower_bound, output_dtype=dt)
    return q, k, g, beta


def token_rows(shapes: KDAShapes, cu_seqlens, device) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Per token row ``[B, T]``: its sequence (clamped to a valid index), whether it belongs to one
    (rows past ``cu_seqlens[N]`` are CUDA-graph padding), and its position in that sequence."""
    seq = sequence_of_token(shapes, cu_seqlens, device)
    real = seq < shapes.N
    seq = seq.clamp(0, max(shapes.N - 1, 0))
    pos = torch.arange(shapes.T, device=device).expand(shapes.B, shapes.T)
    if cu_seqlens is not None:
        pos = pos - cu_seqlens.to(torch.int64)[seq]
    return seq, real, pos


def sequence_of_token(shapes: KDAShapes, cu_seqlens, device) -> torch.Tensor:
    """``[B, T]`` index of the sequence each token row belongs to."""
    if cu_seqlens is None:
        return torch.arange(shapes.B, device=device)[:, None].expand(shapes.B, shapes.T)
    tokens = torch.arange(shapes.T, device=device)
    return (torch.searchsorted(cu_seqlens.to(torch.int64), tokens, right=True) - 1)[None]


def kda_torch(
    q, k, v, g, beta, shapes: KDAShapes, *, chunked: bool, initial_state, indices, output_final_state,
    state_v_first, cu_seqlens, use_qk_l2norm, use_beta_sigmoid, A_log, dt_bias, skip_padded: bool,
    allow_neg_eigval=False, num_accepted=None, track_state=None, track_chunk_idx=None, verify_buffer=None,
    verify_rows=None, verify_parents=None, pad_slot_id=-1,
):
    """Run one KDA call in torch. Returns ``(o, final_state or None)``; pools are updated in place.

    ``skip_padded``: sequences whose pool index is -1 produce zero output (decode semantics);
    otherwise they start from a zero state and write nothing (prefill semantics).
    Indices ``[N, T_max]`` (decode, speculative verification): sequence n starts from slot
    ``indices[n, num_accepted[n] - 1]`` (column 0 without ``num_accepted``) and the state after its
    token t goes to slot ``indices[n, t]`` (none where it is -1).
    ``pad_slot_id`` (-1 or 0): every pool index ``<=`` it means what -1 does.
    ``track_state`` / ``track_chunk_idx`` (chunked only): state snapshots, see :mod:`kimiops.kda.track`.
    ``verify_buffer`` / ``verify_rows`` / ``verify_parents`` (decode with ``[N]`` indices): target
    verification, see :mod:`kimiops.kda.verify`; the pool is read, not written.
    """
    qf, kf, gf, bf = preprocess(q, k, g, beta, shapes, use_qk_l2norm, use_beta_sigmoid, A_log, dt_bias,
                                allow_neg_eigval)
    vf = v.to(qf.dtype)
    h0 = initial_state
    spec = shapes.pool and indices.dim() == 2
    if shapes.pool:
        seq, real, pos = token_rows(shapes, cu_seqlens, q.device)
        idx = indices.to(torch.int64)
        start = idx
        if spec:
            col = torch.zeros_like(idx[:, 0]) if num_accepted is None else num_accepted.to(torch.int64) - 1
            start = idx.gather(1, col[:, None])[:, 0]
        valid = start > pad_slot_id
        gathered = initial_state[start.clamp(min=0)].to(qf.dtype)
        h0 = torch.where(valid[:, None, None, None], gathered, torch.zeros_like(gathered))  # poison-safe
    oracle = naive_chunk_kda if chunked else naive_recurrent_kda
    verify = verify_buffer is not None
    extra = {"token_states": True} if spec or verify else {}
    if verify_parents is not None:
        extra["token_parents"] = _token_parents(verify_parents, seq, real, pos)
    if track_state is not None:
        extra.update(state_after=_snapshot_tokens(track_chunk_idx, shapes, cu_seqlens), chunk_size=TRACK_CHUNK)
    res = oracle(
        qf, kf, vf, gf, bf, scale=shapes.scale, initial_state=h0,
        output_final_state=output_final_state or shapes.pool, cu_seqlens=cu_seqlens, state_v_first=state_v_first,
        **extra,
    )
    o, ht = res[0], res[1]
    if track_state is not None:
        want = torch.tensor(extra["state_after"], device=track_state.device) >= 0
        track_state[want] = res[2][want.to(res[2].device)].to(track_state.dtype)
    if shapes.pool:
        if skip_padded:
            keep = real & valid[seq] if shapes.N else real
            o = torch.where(keep[..., None, None], o, torch.zeros_like(o))
        if spec:
            _store_token_states(initial_state, idx, valid, seq, real, pos, res[2], shapes, pad_slot_id)
        elif verify:
            _store_verify_states(verify_buffer, verify_rows.to(torch.int64), valid, seq, real, pos, res[2], shapes)
        else:
            initial_state[idx[valid]] = ht[valid].to(initial_state.dtype)
        ht = initial_state if output_final_state else None
    elif ht is not None:
        ht = ht.to(torch.float32)
    return o.to(v.dtype).contiguous(), ht  # contiguous, as the kernels' o


def _snapshot_tokens(track_chunk_idx, shapes: KDAShapes, cu_seqlens) -> list[int]:
    """Token counts of the requested snapshots per sequence (-1: none; indices past a sequence's
    end, which only unchecked GPU values can hold, ask for none as in the kernels)."""
    at = [j * TRACK_CHUNK for j in track_chunk_idx.tolist()]
    lengths = sequence_lengths(shapes.N, shapes.T, cu_seqlens).tolist()
    return [a if 0 <= a <= n else -1 for a, n in zip(at, lengths)]


def _token_parents(parents, seq, real, pos) -> torch.Tensor:
    """``[B, T]`` parent position of every token row (``token_rows``) from the per-request
    ``[N, W]`` table (rows of no request, and positions past W, get the chain's ``position - 1``)."""
    table = parents.to(torch.int64)[seq, pos.clamp(0, parents.shape[1] - 1)]
    return torch.where(real & (pos < parents.shape[1]), table, pos - 1)


def _store_verify_states(buffer, rows, valid, seq, real, pos, after, shapes: KDAShapes):
    """Target verification: the state after token row r of request n (``after [B, T, ...]``) goes
    to ``buffer[rows[n], r - start of n]`` where ``rows[n] >= 0``, the request is not padding and
    the position is below the buffer's ``cache_steps``. ``seq, real, pos``: ``token_rows``."""
    if shapes.N == 0 or shapes.T == 0:
        return
    row = rows[seq]
    keep = real & valid[seq] & (row >= 0) & (pos < buffer.shape[1])
    buffer[row[keep], pos[keep]] = after[keep].to(buffer.dtype)


def _store_token_states(pool, idx, valid, seq, real, pos, after, shapes: KDAShapes, pad_slot_id=-1):
    """Speculative pools: the state after token row r of sequence n (``after [B, T, ...]``) goes
    to slot ``idx[n, r - start of n]`` where that index is > ``pad_slot_id`` and n is not padding.
    ``seq, real, pos``: ``token_rows``."""
    if shapes.N == 0 or shapes.T == 0:
        return
    slot = idx[seq, pos.clamp(0, idx.shape[1] - 1)]
    keep = real & valid[seq] & (slot > pad_slot_id) & (pos < idx.shape[1])
    pool[slot[keep]] = after[keep].to(pool.dtype)
