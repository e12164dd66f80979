"""Keyword arguments that flash-linear-attention's (FLA 0.6) ``chunk_kda`` and ``fused_recurrent_kda``
(and vLLM's copy of the latter) accept besides ours, so calls written for them run unchanged.

What each one does here:

- ``allow_neg_eigval`` (both ops): ``beta = 2 * sigmoid(logits)``; needs
  ``use_beta_sigmoid_in_kernel=True``, as in FLA. Implemented in the kernels and the torch path.
- ``safe_gate`` (prefill): FLA's switch to a faster kernel for gates bounded by ``lower_bound``.
  Our kernels are exact for every gate and take their cheaper factorization for the lower-bound
  gate in the kernel whether or not it is passed (a precomputed g is never trusted to be bounded),
  so it changes nothing; its argument rule is kept (with ``use_gate_in_kernel`` it needs ``lower_bound``).
- ``chunk_size`` (prefill, 32 or 64): FLA's chunk length. The result is the same recurrence at
  either length; ours runs its own chunking, so it changes nothing beyond rounding.
- ``cu_seqlens_cpu`` (prefill): a host copy of ``cu_seqlens``. Nothing here needs one (metadata
  is built on the device); it is checked against ``cu_seqlens`` with ``KIMIOPS_DEBUG=1``.
- ``use_graph`` / ``max_num_seqs`` (prefill): FLA's CUDA-graph mode. Every call here is graph-safe
  at fixed shapes already; as in FLA, with ``use_graph`` and ``cu_seqlens`` a given ``max_num_seqs``
  must equal the sequence count (``cu_seqlens`` padded with empty tail sequences).
- ``transpose_state_layout`` (both ops): FLA's deprecated name of ``state_v_first``; as in FLA it
  warns (``DeprecationWarning``), and passing both is an error.
- ``disable_recompute`` (prefill): a training knob of FLA's backward; kimiops runs the forward
  pass only, so it changes nothing.
- ``return_intermediate_states`` / ``cp_context`` (prefill): not supported (``NotImplementedError``).
  What engines take from FLA's per-chunk states, the state at one 64-token boundary per sequence for
  prefix caching, ``chunk_kda`` writes directly with ``track_state`` / ``track_chunk_idx``
  (``kimiops.kda.track``, SGLang's arguments).
- ``inplace_final_state`` (decode, vLLM): ``True`` is what a state pool does here (it needs
  ``ssm_state_indices``); ``False`` with a pool (per-token states into a new tensor) is not
  supported.
- ``num_accepted_tokens`` with two-dimensional ``ssm_state_indices`` (decode, vLLM's speculative
  verification): see ``fused_recurrent_kda``.
"""

from __future__ import annotations

import warnings

import torch

from kimiops.validation import check_tensor, reads_values

CHUNK_SIZES = (32, 64)


def _flag(name: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{name}: expected a bool, got {type(value).__name__}")
    return value


def check_neg_eigval(allow_neg_eigval: object, use_beta_sigmoid_in_kernel: object) -> None:
    """``allow_neg_eigval`` must be a bool, and True only when beta comes as logits."""
    if _flag("allow_neg_eigval", allow_neg_eigval) and not use_beta_sigmoid_in_kernel:
        raise ValueError("allow_neg_eigval: True needs use_beta_sigmoid_in_kernel=True (beta = 2 * sigmoid(logits)), "
                         "got use_beta_sigmoid_in_kernel=False")


def check_prefill_options(*, allow_neg_eigval, use_beta_sigmoid_in_kernel, safe_gate, use_gate_in_kernel, lower_bound,
                          chunk_size, cu_seqlens, cu_seqlens_cpu, use_graph, max_num_seqs, disable_recompute,
                          return_intermediate_states, cp_context) -> None:
    """Check ``chunk_kda``'s FLA keywords (see the module docstring); raises before any launch."""
    check_neg_eigval(allow_neg_eigval, use_beta_sigmoid_in_kernel)
    if return_intermediate_states:
        raise NotImplementedError("return_intermediate_states: kimiops.chunk_kda does not return per-chunk states; "
                                  "call it with return_intermediate_states=False (for prefix caching, "
                                  "track_state= and track_chunk_idx= snapshot the fp32 state at a 64-token boundary)")
    if cp_context is not None:
        raise NotImplementedError("cp_context: context parallelism is not supported by kimiops.chunk_kda; pass None")
    if _flag("safe_gate", safe_gate) and use_gate_in_kernel and lower_bound is None:
        raise ValueError("safe_gate: True with use_gate_in_kernel=True needs lower_bound in [-5, 0), got None")
    if chunk_size is not None and chunk_size not in CHUNK_SIZES:
        raise ValueError(f"chunk_size: expected one of {CHUNK_SIZES} or None, got {chunk_size!r}")
    _flag("use_graph", use_graph)
    _flag("disable_recompute", disable_recompute)
    if cu_seqlens_cpu is not None:
        check_tensor("cu_seqlens_cpu", cu_seqlens_cpu, ndim=1)
        if cu_seqlens is None:
            raise ValueError("cu_seqlens_cpu: given without cu_seqlens")
        if cu_seqlens_cpu.device.type != "cpu":
            raise ValueError(f"cu_seqlens_cpu: expected a CPU tensor, got one on {cu_seqlens_cpu.device}")
        if isinstance(cu_seqlens, torch.Tensor) and cu_seqlens_cpu.shape != cu_seqlens.shape:
            raise ValueError(f"cu_seqlens_cpu: expected the shape of cu_seqlens {list(cu_seqlens.shape)}, "
                             f"got {list(cu_seqlens_cpu.shape)}")
        if isinstance(cu_seqlens, torch.Tensor) and reads_values(cu_seqlens) and \
                not torch.equal(cu_seqlens_cpu.to(torch.int64), cu_seqlens.detach().cpu().to(torch.int64)):
            raise ValueError("cu_seqlens_cpu: expected the values of cu_seqlens, got different ones")
    if max_num_seqs is not None:
        if isinstance(max_num_seqs, bool) or not isinstance(max_num_seqs, int):
            raise TypeError(f"max_num_seqs: expected an int or None, got {type(max_num_seqs).__name__}")
        if use_graph and isinstance(cu_seqlens, torch.Tensor) and max_num_seqs != cu_seqlens.shape[0] - 1:
            raise ValueError(f"max_num_seqs: with use_graph=True, expected the number of sequences of cu_seqlens "
                             f"({cu_seqlens.shape[0] - 1}; pad it with empty tail sequences), got {max_num_seqs}")


def resolve_state_layout(state_v_first: bool, transpose_state_layout: object) -> bool:
    """``state_v_first`` given FLA's deprecated alias ``transpose_state_layout`` (the callers pass
    it only when it was given)."""
    if state_v_first:
        raise ValueError("transpose_state_layout: the deprecated name of state_v_first; pass one of them, got both")
    warnings.warn("transpose_state_layout is deprecated (as in flash-linear-attention); pass state_v_first",
                  DeprecationWarning, stacklevel=3)
    return _flag("transpose_state_layout", transpose_state_layout)


def check_inplace_final_state(inplace_final_state: object, ssm_state_indices) -> None:
    """vLLM's ``inplace_final_state``: ``None``/``True`` with a pool, ``None``/``False`` without."""
    if inplace_final_state is None:
        return
    if _flag("inplace_final_state", inplace_final_state) and ssm_state_indices is None:
        raise ValueError("inplace_final_state: True needs ssm_state_indices (a state pool updated in place); "
                         "without them the final state is returned as a new tensor")
    if not inplace_final_state and ssm_state_indices is not None:
        raise ValueError("inplace_final_state: False with ssm_state_indices (per-token states into a new tensor) "
                         "is not supported; the pool is updated in place")
