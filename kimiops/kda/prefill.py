"""``chunk_kda``: chunked KDA prefill, a drop-in for flash-linear-attention's ``chunk_kda``."""

from __future__ import annotations

import torch

from kimiops.kda.fla_options import check_prefill_options, resolve_state_layout
from kimiops.kda.runner import PREFILL, call_kda, eager_call, register_kda_op

_op = register_kda_op(PREFILL)


def chunk_kda(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    g: torch.Tensor,
    beta: torch.Tensor,
    scale: float | None = None,
    initial_state: torch.Tensor | None = None,
    output_final_state: bool = False,
    use_qk_l2norm_in_kernel: bool = False,
    use_gate_in_kernel: bool = False,
    use_beta_sigmoid_in_kernel: bool = False,
    A_log: torch.Tensor | None = None,
    dt_bias: torch.Tensor | None = None,
    lower_bound: float | None = None,
    state_v_first: bool = False,
    cu_seqlens: torch.Tensor | None = None,
    *,
    initial_state_indices: torch.Tensor | None = None,
    track_state: torch.Tensor | None = None,
    track_chunk_idx: torch.Tensor | None = None,
    allow_neg_eigval: bool = False,
    safe_gate: bool = False,
    chunk_size: int | None = None,
    cu_seqlens_cpu: torch.Tensor | None = None,
    use_graph: bool = False,
    max_num_seqs: int | None = None,
    disable_recompute: bool = False,
    return_intermediate_states: bool = False,
    cp_context: object = None,
    transpose_state_layout: bool | None = None,
    backend: str | None = None,
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Chunked KDA prefill (DESIGN.md section 1), FLA-compatible.

    Args:
        q, k: ``[B, T, H, K]``; v: ``[B, T, HV, V]`` (HV a multiple of H: GVA); fp16/bf16/fp32,
            all the same dtype.
        g: ``[B, T, HV, K]`` log decay (``<= 0``), or raw gate logits with ``use_gate_in_kernel``.
        beta: ``[B, T, HV]``, or logits with ``use_beta_sigmoid_in_kernel``.
        scale: defaults to ``K ** -0.5``.
        initial_state: ``[N, HV, K, V]`` fp32 (``[N, HV, V, K]`` with ``state_v_first``); with
            ``initial_state_indices``, a pool ``[slots, HV, ...]`` fp32 updated in place.
        output_final_state: return the final states ``[N, HV, K, V]`` fp32 (pool mode: the pool).
        use_qk_l2norm_in_kernel: L2-normalize q and k per head (eps 1e-6).
        use_gate_in_kernel: ``g`` holds raw logits. Softplus gate
            ``-exp(A_log[h]) * softplus(g + dt_bias[h])`` (needs ``A_log [HV]``); with
            ``lower_bound`` in [-5, 0) the lower-bound gate
            ``lower_bound * sigmoid(exp(A_log[h]) * (g + dt_bias[h]))`` (``A_log`` optional).
            Without ``use_gate_in_kernel``, ``lower_bound`` is only range-checked.
        dt_bias: ``[HV * K]`` (or ``[HV, K]``).
        cu_seqlens: ``[N + 1]`` int32/int64 cumulative lengths with ``B == 1`` (varlen).
        initial_state_indices: int32 ``[N]`` pool slots; -1 starts from zeros and writes nothing;
            no other slot is touched.
        track_state, track_chunk_idx: state snapshots for prefix caching, as SGLang's KDA prefill
            takes them (:mod:`kimiops.kda.track`): ``track_state`` fp32 ``[N, HV, K, V]`` (``[N, HV,
            V, K]`` with ``state_v_first``), contiguous; ``track_chunk_idx`` int32 ``[N]``. Row n
            receives sequence n's fp32 state after its first ``64 * track_chunk_idx[n]`` tokens
            (0: the initial state; the sequence's length: the final state); rows with -1 are not
            touched. Values are checked on CPU and with ``KIMIOPS_DEBUG=1``; unchecked indices past
            a sequence's end write nothing. Such calls skip the eager shortcut.
        allow_neg_eigval, safe_gate, chunk_size, cu_seqlens_cpu, use_graph, max_num_seqs,
            disable_recompute, return_intermediate_states, cp_context, transpose_state_layout:
            flash-linear-attention's keywords, accepted so its calls run unchanged; only
            ``allow_neg_eigval`` (beta = 2 sigmoid(logits), needs ``use_beta_sigmoid_in_kernel``)
            and ``transpose_state_layout`` (the deprecated name of ``state_v_first``) change the
            result. What each does here: ``kimiops.kda.fla_options``.
        backend: ``None``/``"auto"``, ``"triton"`` or ``"torch"`` (env ``KIMIOPS_BACKEND``).
    Returns:
        ``o [B, T, HV, V]`` in v's dtype and the final state (or ``None``).
    """
    if transpose_state_layout is not None:  # FLA's deprecated name of state_v_first
        state_v_first = resolve_state_layout(state_v_first, transpose_state_layout)
    if (allow_neg_eigval is not False or safe_gate is not False or chunk_size is not None or cu_seqlens_cpu is not None
            or use_graph is not False or max_num_seqs is not None or disable_recompute is not False
            or return_intermediate_states is not False or cp_context is not None):  # off the common path
        check_prefill_options(
            allow_neg_eigval=allow_neg_eigval, use_beta_sigmoid_in_kernel=use_beta_sigmoid_in_kernel,
            safe_gate=safe_gate, use_gate_in_kernel=use_gate_in_kernel, lower_bound=lower_bound,
            chunk_size=chunk_size, cu_seqlens=cu_seqlens, cu_seqlens_cpu=cu_seqlens_cpu, use_graph=use_graph,
            max_num_seqs=max_num_seqs, disable_recompute=disable_recompute,
            return_intermediate_states=return_intermediate_states, cp_context=cp_context,
        )
    # eager calls on a GPU that repeat a signature replay their launches (see ``runner._eager``)
    res, key = eager_call(
        PREFILL, q, k, v, g, beta, scale, initial_state, output_final_state, use_qk_l2norm_in_kernel,
        use_gate_in_kernel, use_beta_sigmoid_in_kernel, A_log, dt_bias, lower_bound, state_v_first, cu_seqlens,
        initial_state_indices, backend, allow_neg_eigval=allow_neg_eigval, track_state=track_state,
        track_chunk_idx=track_chunk_idx,
    )
    if res is not None:
        return res
    return call_kda(
        PREFILL, _op, q, k, v, g, beta, scale, initial_state, output_final_state, use_qk_l2norm_in_kernel,
        use_gate_in_kernel, use_beta_sigmoid_in_kernel, A_log, dt_bias, lower_bound, state_v_first, cu_seqlens,
        initial_state_indices, backend, eager_key=key, allow_neg_eigval=allow_neg_eigval, track_state=track_state,
        track_chunk_idx=track_chunk_idx,
    )

