"""``fused_recurrent_kda``: token-recurrent KDA for decode (and speculative verification)."""

from __future__ import annotations

import torch

from kimiops.kda.args import check_pad_slot_id
from kimiops.kda.fla_options import check_inplace_final_state, check_neg_eigval, resolve_state_layout
from kimiops.kda.runner import DECODE, call_kda, eager_call, register_kda_op

_op = register_kda_op(DECODE)


def fused_recurrent_kda(
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
    ssm_state_indices: torch.Tensor | None = None,
    num_accepted_tokens: torch.Tensor | None = None,
    inplace_final_state: bool | None = None,
    allow_neg_eigval: bool = False,
    pad_slot_id: int = -1,
    transpose_state_layout: bool | None = None,
    backend: str | None = None,
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Recurrent KDA over a few tokens per sequence; same conventions as :func:`kimiops.chunk_kda`.

    With ``ssm_state_indices`` (int32 ``[N]``), ``initial_state`` is a pool ``[slots, HV, V, K]``
    (``state_v_first=True``, the serving layout) or ``[slots, HV, K, V]``, fp32 or bf16, updated
    in place. Index -1 marks padding: that sequence's state is neither read nor written and its
    output rows are zero. Several tokens per sequence (speculative verification) via ``cu_seqlens``.

    Speculative verification as vLLM runs it: ``ssm_state_indices`` ``[N, T_max]`` (stride 1 along
    T_max, at least as many columns as the longest sequence has tokens) and optionally
    ``num_accepted_tokens`` int32 ``[N]`` in ``[1, T_max]``. Sequence n then starts from slot
    ``ssm_state_indices[n, num_accepted_tokens[n] - 1]`` (column 0 without it; -1 there: padding,
    as above), and the state after its token t is written to slot ``ssm_state_indices[n, t]``
    (skipped where that is -1), so the engine can resume from whichever draft token it accepts.

    ``pad_slot_id=0`` makes slot 0 padding as well, wherever -1 is (vLLM pads with its null block,
    slot 0, and its own decode kernels skip every index <= 0); slot 0 is then never read or written.

    FLA / vLLM keywords (``kimiops.kda.fla_options``): ``allow_neg_eigval`` (beta =
    2 sigmoid(logits); needs ``use_beta_sigmoid_in_kernel``); ``inplace_final_state`` (``True``
    needs ``ssm_state_indices``; ``False`` with them is not supported); ``transpose_state_layout``
    (FLA's deprecated name of ``state_v_first``).

    Returns:
        ``o [B, T, HV, V]`` in v's dtype and the final state (pool mode: the pool) or ``None``.
    """
    if transpose_state_layout is not None:  # FLA's deprecated name of state_v_first
        state_v_first = resolve_state_layout(state_v_first, transpose_state_layout)
    if allow_neg_eigval is not False or inplace_final_state is not None or pad_slot_id != -1:  # off the common path
        check_neg_eigval(allow_neg_eigval, use_beta_sigmoid_in_kernel)
        check_inplace_final_state(inplace_final_state, ssm_state_indices)
        check_pad_slot_id(pad_slot_id, ssm_state_indices, "ssm_state_indices")
    # eager calls on a GPU that repeat a signature launch straight away (see ``runner._eager``)
    res, key = eager_call(
        DECODE, q, k, v, g, beta, scale, initial_state, output_final_state, use_qk_l2norm_in_kernel, use_gate_in_kernel,
        use_beta_sigmoid_in_kernel, A_log, dt_bias, lower_bound, state_v_first, cu_seqlens, ssm_state_indices, backend,
        allow_neg_eigval=allow_neg_eigval, num_accepted=num_accepted_tokens, pad_slot_id=pad_slot_id,
    )
    if res is not None:
        return res
    return call_kda(
        DECODE, _op, q, k, v, g, beta, scale, initial_state, output_final_state, use_qk_l2norm_in_kernel,
        use_gate_in_kernel, use_beta_sigmoid_in_kernel, A_log, dt_bias, lower_bound, state_v_first, cu_seqlens,
        ssm_state_indices, backend, eager_key=key, allow_neg_eigval=allow_neg_eigval, num_accepted=num_accepted_tokens,
        pad_slot_id=pad_slot_id,
    )
