"""Portable torch implementation of the KDA ops (CPU tensors, and any GPU family without kernels).

It preprocesses inputs with :mod:`kimiops.kda.gate` and runs the fp32 versions of the oracles in
:mod:`kimiops.kda.reference` (the chunked form for prefill, the recurrence for decode), handling
state pools around them.
"""

from __future__ import annotations

import torch

from kimiops.kda.args import GATE_NONE, KDAShapes
from kimiops.kda.gate import kda_gate, l2norm
from kimiops.kda.reference import naive_chunk_kda, naive_recurrent_kda


def preprocess(q, k, g, beta, shapes: KDAShapes, use_qk_l2norm, use_beta_sigmoid, A_log, dt_bias):
    """fp32 (fp64 stays fp64) q, k, g, beta after the optional L2 norm, gate and sigmoid."""
    dt = torch.float64 if q.dtype == torch.float64 else torch.float32
    q, k, beta = q.to(dt), k.to(dt), beta.to(dt)
    if use_qk_l2norm:
        q, k = l2norm(q), l2norm(k)
    if use_beta_sigmoid:
        beta = torch.sigmoid(beta)
    if shapes.gate == GATE_NONE:
        g = g.to(dt)
    else:
        g = kda_gate(g, A_log, dt_bias, shapes.lower_bound, output_dtype=dt)
    return q, k, g, beta


def sequence_of_token(shapes: KDAShapes, cu_seqlens, device) -> torch.Tensor:
    """``[B, T]`` index of the sequence each token row belongs to."""
    if cu_seqlens is None:
        return torch.arange(shapes.B, device=device)[:, None].expand(shapes.B, shapes.T)
    tokens = torch.arange(shapes.T, device=device)
    return (torch.searchsorted(cu_seqlens.to(torch.int64), tokens, right=True) - 1)[None]


def kda_torch(
    q, k, v, g, beta, shapes: KDAShapes, *, chunked: bool, initial_state, indices, output_final_state,
    state_v_first, cu_seqlens, use_qk_l2norm, use_beta_sigmoid, A_log, dt_bias, skip_padded: bool,
):
    """Run one KDA call in torch. Returns ``(o, final_state or None)``; pools are updated in place.

    ``skip_padded``: sequences whose pool index is -1 produce zero output (decode semantics);
    otherwise they start from a zero state and write nothing (prefill semantics).
    """
    qf, kf, gf, bf = preprocess(q, k, g, beta, shapes, use_qk_l2norm, use_beta_sigmoid, A_log, dt_bias)
    vf = v.to(qf.dtype)
    h0 = initial_state
    if shapes.pool:
        idx = indices.to(torch.int64)
        valid = idx >= 0
        gathered = initial_state[idx.clamp(min=0)].to(qf.dtype)
        h0 = torch.where(valid[:, None, None, None], gathered, torch.zeros_like(gathered))  # poison-safe
    oracle = naive_chunk_kda if chunked else naive_recurrent_kda
    o, ht = oracle(
        qf, kf, vf, gf, bf, scale=shapes.scale, initial_state=h0,
        output_final_state=output_final_state or shapes.pool, cu_seqlens=cu_seqlens, state_v_first=state_v_first,
    )
    if shapes.pool:
        if skip_padded:
            seq = sequence_of_token(shapes, cu_seqlens, q.device)
            o = torch.where(valid[seq][..., None, None], o, torch.zeros_like(o))
        initial_state[idx[valid]] = ht[valid].to(initial_state.dtype)
        ht = initial_state if output_final_state else None
    elif ht is not None:
        ht = ht.to(torch.float32)
    return o.to(v.dtype), ht
