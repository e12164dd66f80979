"""Torch oracles of KDA (DESIGN.md section 1).

Both functions compute in the dtype of their inputs promoted to at least fp32: pass fp64 tensors
for the exact oracle, fp32 for the portable CPU path. They return ``(o, final_state)`` in that
compute dtype; ``final_state`` is ``None`` unless ``output_final_state``.

Shapes: q, k ``[B, T, H, K]``; v ``[B, T, HV, V]``; g ``[B, T, HV, K]`` (log decay, <= 0);
beta ``[B, T, HV]``; states ``[N, HV, K, V]`` (``[N, HV, V, K]`` with ``state_v_first``).
GVA: q/k head ``h`` serves value heads ``h*G .. h*G+G-1`` with ``G = HV // H``.
Varlen: ``B == 1`` and ``cu_seqlens [N+1]``.
"""

from __future__ import annotations

import torch

CHUNK_SIZE = 64
SUB_CHUNK_SIZE = 16


def _compute_dtype(*tensors: torch.Tensor | None) -> torch.dtype:
    return torch.float64 if any(t is not None and t.dtype == torch.float64 for t in tensors) else torch.float32


def _sequences(B: int, T: int, cu_seqlens: torch.Tensor | None) -> list[tuple[int, int, int]]:
    """``(batch row, start, end)`` of every sequence."""
    if cu_seqlens is None:
        return [(b, 0, T) for b in range(B)]
    bounds = cu_seqlens.tolist()
    return [(0, bounds[i], bounds[i + 1]) for i in range(len(bounds) - 1)]


def _prepare(q, k, v, g, beta, scale, initial_state, cu_seqlens, state_v_first):
    """Upcast, expand GVA heads and load initial states as ``[N, HV, K, V]``."""
    dt = _compute_dtype(q, k, v, g, beta, initial_state)
    B, T, H, K = q.shape
    HV, V = v.shape[2], v.shape[3]
    G = HV // H
    q = q.to(dt).repeat_interleave(G, dim=2)
    k = k.to(dt).repeat_interleave(G, dim=2)
    seqs = _sequences(B, T, cu_seqlens)
    if initial_state is None:
        h0 = torch.zeros(len(seqs), HV, K, V, dtype=dt, device=q.device)
    else:
        h0 = initial_state.to(dt)
        if state_v_first:
            h0 = h0.transpose(-1, -2)
    scale = K**-0.5 if scale is None else scale
    return q, k, v.to(dt), g.to(dt), beta.to(dt), h0, seqs, scale


def _finish(o, states, output_final_state, state_v_first):
    if not output_final_state:
        return o, None
    ht = torch.stack(states) if states else o.new_zeros(0)
    if state_v_first:
        ht = ht.transpose(-1, -2)
    return o, ht.contiguous()


def naive_recurrent_kda(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    g: torch.Tensor,
    beta: torch.Tensor,
    scale: float | None = None,
    initial_state: torch.Tensor | None = None,
    output_final_state: bool = False,
    cu_seqlens: torch.Tensor | None = None,
    state_v_first: bool = False,
    token_states: bool = False,
    token_parents: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Token-by-token recurrence: ``S = diag(e^g) S; S += beta k (v - S^T k)^T; o = S^T (scale q)``.

    ``token_states``: also return, as a third result, the state after every token row
    ``[B, T, HV, K, V]`` (``[B, T, HV, V, K]`` with ``state_v_first``; zeros on rows of no sequence).
    ``token_parents``: ``[B, T]`` integers, a tree of tokens within each sequence (speculative
    decoding's draft trees): the token at position ``i > 0`` of its sequence continues from the
    state after the token at position ``token_parents[b, row]`` (-1: from the initial state)
    instead of position ``i - 1``; position 0 starts from the initial state.
    """
    q, k, v, g, beta, h0, seqs, scale = _prepare(q, k, v, g, beta, scale, initial_state, cu_seqlens, state_v_first)
    o = torch.zeros_like(v)
    B, T, HV, K = k.shape
    after = o.new_zeros(B, T, HV, K, v.shape[-1]) if token_states or token_parents is not None else None
    states = []
    for n, (b, start, end) in enumerate(seqs):
        S = h0[n].clone()  # [HV, K, V]
        for t in range(start, end):
            if token_parents is not None and t > start:
                p = int(token_parents[b, t])
                if p != t - start - 1:
                    S = (h0[n] if p < 0 else after[b, start + p]).clone()
            S = S * torch.exp(g[b, t]).unsqueeze(-1)
            kt = k[b, t]  # [HV, K]
            err = v[b, t] - torch.einsum("hk,hkv->hv", kt, S)
            S = S + beta[b, t][:, None, None] * kt.unsqueeze(-1) * err.unsqueeze(-2)
            o[b, t] = torch.einsum("hk,hkv->hv", q[b, t] * scale, S)
            if after is not None:
                after[b, t] = S
        states.append(S)
    o, ht = _finish(o, states, output_final_state, state_v_first)
    if not token_states:
        return o, ht
    return o, ht, (after.transpose(-1, -2).contiguous() if state_v_first else after)


def intra_chunk_scores(
    left: torch.Tensor, k: torch.Tensor, gcum: torch.Tensor, include_diagonal: bool
) -> torch.Tensor:
    """Gated scores ``A[i, j] = sum_d left_id k_jd exp(G_id - G_jd)`` for ``j < i`` (``j <= i``).

    Overflow-safe for unbounded gates: every evaluated exponent is <= 0.
    Rows are split into sub-chunks of 16. Off-diagonal sub-blocks (J < I) factor through the
    anchor ``r`` = first row of sub-chunk I: ``exp(G_i - G_r) * exp(G_r - G_j)``, both factors
    <= 0 in the exponent since ``j < r <= i`` and G is non-increasing. Diagonal sub-blocks are
    evaluated pairwise with the exponent masked to -inf above the diagonal before ``exp``.

    Args:
        left: ``[..., C, K]`` (k for A_kk, q for A_qk); k, gcum: ``[..., C, K]`` with gcum the
            inclusive in-chunk cumsum of g. C must be a multiple of 16.
    Returns:
        ``[..., C, C]`` lower-triangular scores.
    """
    *lead, C, K = k.shape
    BC = SUB_CHUNK_SIZE
    NS = C // BC
    Ls = left.reshape(*lead, NS, BC, K)
    ks = k.reshape(*lead, NS, BC, K)
    Gs = gcum.reshape(*lead, NS, BC, K)
    anchor = Gs[..., :, :1, :]  # [..., NS, 1, K], G at the first row of each sub-chunk
    left_anchored = Ls * torch.exp(Gs - anchor).to(Ls.dtype)  # [..., NS(I), BC, K]
    # k_j scaled to the anchor of sub-chunk I: [..., NS(I), NS(J), BC, K], valid for J < I
    expo = anchor.unsqueeze(-3) - Gs.unsqueeze(-4)
    lower_blocks = torch.ones(NS, NS, dtype=torch.bool, device=k.device).tril(-1)
    expo = torch.where(lower_blocks[:, :, None, None], expo, torch.full_like(expo, float("-inf")))
    k_anchored = ks.unsqueeze(-4) * torch.exp(expo).to(ks.dtype)
    off = torch.einsum("...ick,...ijdk->...icjd", left_anchored, k_anchored)  # [..., I, BC, J, BC]
    # diagonal sub-blocks, pairwise
    diff = Gs.unsqueeze(-2) - Gs.unsqueeze(-3)  # [..., NS, BC(i), BC(j), K]
    keep = torch.ones(BC, BC, dtype=torch.bool, device=k.device).tril(0 if include_diagonal else -1)
    diff = torch.where(keep[:, :, None], diff, torch.full_like(diff, float("-inf")))
    diag = torch.einsum("...sik,...sjk,...sijk->...sij", Ls, ks, torch.exp(diff).to(Ls.dtype))
    full = off.reshape(*lead, C, C).clone()
    for s in range(NS):
        full[..., s * BC : (s + 1) * BC, s * BC : (s + 1) * BC] = diag[..., s, :, :]
    return full


def _chunk_sequence(q, k, v, g, beta, S, scale, chunk_size, snap_chunk=-1):
    """One sequence (all heads at once). q,k,g ``[L, HV, K]``; v ``[L, HV, V]``; beta ``[L, HV]``; S ``[HV, K, V]``.
    Returns ``(o, final S, S before chunk snap_chunk)``: the last is the final S for
    ``snap_chunk`` = the chunk count, ``None`` for -1."""
    L = q.shape[0]
    C = chunk_size
    NC = (L + C - 1) // C
    pad = NC * C - L
    if pad:
        # padded rows: k = v = beta = 0 and g = 0 change neither the state nor real outputs
        q, k, v, g, beta = (torch.nn.functional.pad(x, (0, 0) * (x.dim() - 1) + (0, pad)) for x in (q, k, v, g, beta))
    HV, K = q.shape[1], q.shape[2]

    def chunks(x):  # [NC*C, HV, D] -> [HV, NC, C, D]
        return x.reshape(NC, C, HV, -1).permute(2, 0, 1, 3)

    qc, kc, vc, gc = chunks(q), chunks(k), chunks(v), chunks(g)
    bc = beta.reshape(NC, C, HV).permute(2, 0, 1).unsqueeze(-1)  # [HV, NC, C, 1]
    # inclusive in-chunk cumsum, <= 0, non-increasing; in float64, as exponent differences are taken
    # from it: in fp32 a run of huge decays (1e5 after 56 steps of -3000) swamps the mild ones after
    # it (state error 7e-3 in the twenty-ninth session's fuzzing; exps are cast back below)
    G = gc.to(torch.float64).cumsum(-2)
    dt = q.dtype
    A_kk = bc * intra_chunk_scores(kc, kc, G, include_diagonal=False)
    A_qk = scale * intra_chunk_scores(qc, kc, G, include_diagonal=True)
    eye = torch.eye(C, dtype=q.dtype, device=q.device)
    rhs = torch.cat([bc * kc * torch.exp(G).to(dt), bc * vc], dim=-1)
    wu = torch.linalg.solve_triangular(eye + A_kk, rhs, upper=False, unitriangular=True)
    w, u = wu[..., :K], wu[..., K:]
    q_decayed = scale * qc * torch.exp(G).to(dt)
    G_last = G[..., -1:, :]  # [HV, NC, 1, K]
    k_to_end = kc * torch.exp(G_last - G).to(dt)
    o = torch.empty_like(vc)
    snap = None
    for c in range(NC):
        if c == snap_chunk:
            snap = S
        v_new = u[:, c] - w[:, c] @ S  # [HV, C, V]
        o[:, c] = q_decayed[:, c] @ S + A_qk[:, c] @ v_new
        S = torch.exp(G_last[:, c, 0]).to(dt).unsqueeze(-1) * S + k_to_end[:, c].transpose(-1, -2) @ v_new
    o = o.permute(1, 2, 0, 3).reshape(NC * C, HV, -1)[:L]
    return o, S, (S if snap_chunk == NC else snap)


def naive_chunk_kda(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    g: torch.Tensor,
    beta: torch.Tensor,
    scale: float | None = None,
    initial_state: torch.Tensor | None = None,
    output_final_state: bool = False,
    cu_seqlens: torch.Tensor | None = None,
    state_v_first: bool = False,
    chunk_size: int = CHUNK_SIZE,
    state_after: list[int] | None = None,
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Chunked form of DESIGN.md section 1 (the template the GPU kernels follow).

    Intra-chunk work is vectorized over heads and chunks; only the state update walks the chunks.
    Every exponent evaluated is <= 0 (see :func:`intra_chunk_scores`), so it stays finite for
    unbounded softplus gates. Same arguments and results as :func:`naive_recurrent_kda`.

    ``state_after``: per sequence a token count, a multiple of ``chunk_size`` and at most the
    sequence's length, or -1; then a third result holds the state after that many tokens of each
    sequence ``[N, HV, K, V]`` (``[N, HV, V, K]`` with ``state_v_first``; zeros where -1), the
    same values the state takes in the walk (``kimiops.kda.track``).
    """
    if chunk_size % SUB_CHUNK_SIZE:
        raise ValueError(f"chunk_size: expected a multiple of {SUB_CHUNK_SIZE}, got {chunk_size}")
    q, k, v, g, beta, h0, seqs, scale = _prepare(q, k, v, g, beta, scale, initial_state, cu_seqlens, state_v_first)
    o = torch.zeros_like(v)
    states = []
    snaps = torch.zeros_like(h0[: len(seqs)]) if state_after is not None else None
    for n, (b, start, end) in enumerate(seqs):
        at = -1 if state_after is None else state_after[n]
        if at >= 0 and (at % chunk_size or at > end - start):
            raise ValueError(f"state_after: expected -1 or a multiple of {chunk_size} up to the length of sequence "
                             f"{n} ({end - start}), got {at}")
        if end == start:
            states.append(h0[n].clone())
            if at == 0:
                snaps[n] = h0[n]
            continue
        sl = slice(start, end)
        o[b, sl], S, snap = _chunk_sequence(q[b, sl], k[b, sl], v[b, sl], g[b, sl], beta[b, sl], h0[n], scale,
                                            chunk_size, at // chunk_size if at >= 0 else -1)
        states.append(S)
        if snap is not None:
            snaps[n] = snap
    o, ht = _finish(o, states, output_final_state, state_v_first)
    if state_after is None:
        return o, ht
    return o, ht, (snaps.transpose(-1, -2).contiguous() if state_v_first else snaps)
