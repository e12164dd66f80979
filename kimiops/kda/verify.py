"""Target verification of speculative decoding as SGLang's KDA backend runs it (``target_verify``).

Each request carries a chain of draft tokens (``query_start_loc`` rows, at most ``cache_steps``).
The pool is not updated: request n starts from ``ssm_states[cache_indices[n]]`` and the state after
each of its tokens t goes to ``intermediate_states_buffer[intermediate_state_indices[n], t]``, from
which the engine copies the state of the last accepted token afterwards (SGLang's
``fused_sigmoid_gating_delta_rule_update(..., disable_state_update=True,
intermediate_states_buffer=..., intermediate_state_indices=..., cache_steps=...)``). Tree drafts
(EAGLE with topk > 1) come as ``retrieve_parent_token`` ``[N, >= cache_steps]``: token t > 0 of
request n continues from the state after its token ``retrieve_parent_token[n, t]`` (-1: from the
pool slot) instead of token t - 1's, as in SGLang's Triton verify kernel; the kernel reads that
state back from the buffer, so a bf16 buffer rounds it.

The kernel is the decode kernel (``recurrent.py``, ``SPEC = 2``); the torch path stores the
oracle's per-token states (``torch_path.py``).
"""

from __future__ import annotations

import torch

from kimiops.validation import INDEX_DTYPES, check_pair, check_tensor, reads_values


def check_verify(buffer, rows, *, N: int, state_shape: tuple, dtypes: tuple, device, lengths, parents=None,
                 starts=None) -> int:
    """Check a target-verify call's buffer and rows before any launch; returns ``cache_steps``.

    Args:
        buffer: ``[rows, cache_steps, *state_shape]`` (``state_shape`` = ``(HV, V, K)`` V-first or
            ``(HV, K, V)``), a dtype of ``dtypes``, on ``device``, each state matrix contiguous.
        rows: int32/int64 ``[N]``, values (read on CPU and with ``KIMIOPS_DEBUG=1``) in
            ``[-1, buffer rows)``, distinct where >= 0 among live requests (``starts[n] >= 0``;
            SGLang points all padded requests at one discard row).
        lengths: a callable returning the requests' token counts (CPU int64 ``[N]``), called only
            when values are read: none may exceed ``cache_steps``.
        parents: ``retrieve_parent_token``, None or int32/int64 ``[N, >= cache_steps]`` (stride 1
            along tokens); values at positions ``0 < t < length`` in ``[-1, t)``, and every request
            that is not padding (``starts[n] >= 0``) must then have a row.
    """
    check_pair("intermediate_states_buffer", buffer, "intermediate_state_indices", rows)
    check_tensor("intermediate_states_buffer", buffer, ndim=5, dtypes=dtypes, device=device)
    if tuple(buffer.shape[2:]) != tuple(state_shape):
        raise ValueError(f"intermediate_states_buffer: expected shape [rows, cache_steps, "
                         f"{', '.join(map(str, state_shape))}], got {list(buffer.shape)}")
    if buffer.stride(4) != 1 or buffer.stride(3) != state_shape[2]:
        raise ValueError(f"intermediate_states_buffer: each state matrix must be contiguous, got strides "
                         f"{buffer.stride()}")
    check_tensor("intermediate_state_indices", rows, shape=(N,), dtypes=INDEX_DTYPES, device=device, contiguous=True)
    steps = buffer.shape[1]
    if steps < 1:
        raise ValueError(f"intermediate_states_buffer: expected at least one state row per request "
                         f"(cache_steps >= 1), got shape {list(buffer.shape)}")
    if reads_values(rows) and N:
        r = rows.detach().cpu().to(torch.int64)
        if int(r.min()) < -1 or int(r.max()) >= buffer.shape[0]:
            raise ValueError(f"intermediate_state_indices: expected values in [-1, {buffer.shape[0]}), "
                             f"got range [{int(r.min())}, {int(r.max())}]")
        live = r >= 0
        if starts is not None:  # a padded request (start slot -1) writes nothing: it may share a row
            live &= starts.detach().cpu() >= 0
        real = r[live]
        if real.numel() != real.unique().numel():
            raise ValueError("intermediate_state_indices: expected distinct rows for distinct live requests "
                             "(-1, and the rows of padded requests, may repeat), got duplicates")
        longest = int(lengths().max())
        if longest > steps:
            raise ValueError(f"intermediate_states_buffer: a request has {longest} tokens, more than its "
                             f"cache_steps = {steps} state rows")
    if parents is not None:
        _check_parents(parents, rows, starts, N, steps, device, lengths)
    return steps


def _check_parents(parents, rows, starts, N, steps, device, lengths):
    check_tensor("retrieve_parent_token", parents, shape=(N, None), dtypes=INDEX_DTYPES, device=device,
                 last_dim_contiguous=True)
    if parents.shape[1] < steps:
        raise ValueError(f"retrieve_parent_token: expected at least cache_steps = {steps} columns, got shape "
                         f"{list(parents.shape)}")
    if not (reads_values(parents) and N):
        return
    p = parents.detach().cpu().to(torch.int64)[:, :steps]
    pos = torch.arange(steps)
    live = pos[None, :] < lengths()[:, None]
    bad = live & (pos[None, :] > 0) & ((p < -1) | (p >= pos[None, :]))
    if bool(bad.any()):
        n, t = (int(i) for i in bad.nonzero()[0])
        raise ValueError(f"retrieve_parent_token: expected the parent of token {t} of request {n} in [-1, {t}) "
                         f"(an earlier token, or -1 for the pool state), got {int(p[n, t])}")
    need_row = (starts.detach().cpu() >= 0) & (rows.detach().cpu() < 0)
    if bool(need_row.any()):
        n = int(need_row.nonzero()[0, 0])
        raise ValueError(f"intermediate_state_indices: tree drafts read parent states back from the buffer, so "
                         f"request {n} needs a row, got -1")
