"""``KDABackend``: extend / decode of KDA layers over a recurrent-state pool, as serving engines
(SGLang, vLLM) call them.

Inputs are token-major (``[1, T_total, H, K]`` or ``[T_total, H, K]``; the output keeps the rank
it was given), requests back to back. The backend receives projections as a Kimi-style model
produces them and does the preprocessing in its kernels: q and k are L2-normalized, ``beta``
holds logits (sigmoid applied; ``extend(beta_is_logits=False)`` takes it activated), ``g`` holds
raw gate logits with ``A_log``/``dt_bias`` (softplus gate) or ``lower_bound`` (lower-bound gate);
with ``A_log`` and ``lower_bound`` both ``None``, ``g`` is already the log decay.

CUDA-graph padding: g and beta may carry more rows than q (they are trimmed to q's token count);
token rows past ``query_start_loc[-1]`` are padding and their output rows are zeros;
padded requests have ``cache_indices == -1`` and their pool slots are never touched.
"""

from __future__ import annotations

import torch

from kimiops.arch import requested_backend
from kimiops.kda.decode import _op as decode_op
from kimiops.kda.dispatch import KDA_BACKENDS, kda_backend
from kimiops.kda.prefill import _op as prefill_op
from kimiops.kda.runner import DECODE, PREFILL, call_kda, eager_call, serving_kind
from kimiops.kda.warmup import default_compile_workers, warm_backend
from kimiops.validation import check_tensor

_EXTEND, _DECODE = serving_kind(PREFILL), serving_kind(DECODE)  # errors name the backend's arguments


def _check_positive_int(name: str, val: object) -> None:
    if isinstance(val, bool) or not isinstance(val, int) or val <= 0:
        raise ValueError(f"{name}: expected a positive int, got {val!r}")


class KDABackend:
    """KDA extend/decode over a state pool ``ssm_states [slots, HV, V, K]`` (V-first, K contiguous).

    Args:
        num_heads: q/k heads ``H``.
        head_k_dim, head_v_dim: ``K`` and ``V``.
        num_v_heads: value heads ``HV`` (default ``H``; a multiple of ``H`` for GVA).
        scale: attention scale (default ``K ** -0.5``).
        backend: ``None``/``"auto"``, ``"triton"`` or ``"torch"``; the choice is made per call from
            the device's capability family and shown by ``repr()``.
    """

    def __init__(self, num_heads: int, head_k_dim: int, head_v_dim: int, num_v_heads: int | None = None, *,
                 scale: float | None = None, backend: str | None = None):
        for name, val in (("num_heads", num_heads), ("head_k_dim", head_k_dim), ("head_v_dim", head_v_dim)):
            _check_positive_int(name, val)
        num_v_heads = num_heads if num_v_heads is None else num_v_heads
        if isinstance(num_v_heads, bool) or not isinstance(num_v_heads, int) or num_v_heads <= 0 \
                or num_v_heads % num_heads:
            raise ValueError(f"num_v_heads: expected a positive multiple of num_heads={num_heads}, got {num_v_heads!r}")
        if backend is not None:  # checked by name now; the family decides per call (``kernels``)
            requested_backend("KDABackend", backend, KDA_BACKENDS, "KIMIOPS_BACKEND")
        self.num_heads, self.head_k_dim, self.head_v_dim, self.num_v_heads = num_heads, head_k_dim, head_v_dim, num_v_heads
        self.scale = scale
        self.backend = backend

    def kernels(self, device: torch.device | str | None = None) -> dict[str, str]:
        """Backend each phase uses on ``device`` (default: current CUDA device, else CPU)."""
        if device is None:
            device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        device = torch.device(device)
        return {
            "extend": kda_backend("chunk_kda", self.backend, device, head_dims=(self.head_k_dim, self.head_v_dim)),
            "decode": kda_backend("fused_recurrent_kda", self.backend, device),
        }

    def __repr__(self) -> str:
        try:
            chosen = self.kernels()
        except (RuntimeError, ValueError) as err:  # a forced backend the device or the head dims do not support
            chosen = {"error": str(err)}
        return (f"KDABackend(H={self.num_heads}, HV={self.num_v_heads}, K={self.head_k_dim}, "
                f"V={self.head_v_dim}, kernels={chosen})")

    def _tokens(self, q, k, v, g, beta):
        """Bring inputs to ``[1, T, ...]``; returns them and whether q came as rank 3."""
        check_tensor("q", q, ndim=(3, 4))
        for name, t in (("k", k), ("v", v), ("g", g), ("beta", beta)):
            check_tensor(name, t)
        squeeze = q.dim() == 3
        if squeeze:
            q, k, v = q.unsqueeze(0), k.unsqueeze(0), v.unsqueeze(0)
            g, beta = g.unsqueeze(0), beta.unsqueeze(0)
        if q.shape[0] != 1:
            raise ValueError(f"q: expected token-major [1, T, H, K] or [T, H, K], got {list(q.shape)}")
        T = q.shape[1]
        expect = (1, T, self.num_heads, self.head_k_dim)
        if tuple(q.shape) != expect:
            raise ValueError(f"q: expected shape {list(expect)}, got {list(q.shape)}")
        # k and v in the caller's terms (the ops below see them reshaped)
        given = (lambda shape: list(shape[1:]) if squeeze else list(shape))  # noqa: E731
        if tuple(k.shape) != expect:
            raise ValueError(f"k: expected the shape of q {given(expect)}, got {given(k.shape)}")
        want_v = (1, T, self.num_v_heads, self.head_v_dim)
        if tuple(v.shape) != want_v:
            raise ValueError(f"v: expected shape {given(want_v)} (q's tokens, HV, V), got {given(v.shape)}")
        check_tensor("g", g, ndim=4)
        check_tensor("beta", beta, ndim=3)
        if g.shape[1] < T or beta.shape[1] < T:
            raise ValueError(f"g, beta: expected at least {T} token rows (q's), got {g.shape[1]} and {beta.shape[1]}")
        if g.shape[1] > T:  # CUDA-graph padding rows
            g = g[:, :T]
        if beta.shape[1] > T:
            beta = beta[:, :T]
        return q, k, v, g, beta, squeeze

    def _check_pool(self, ssm_states):
        check_tensor("ssm_states", ssm_states, ndim=4)
        want = (self.num_v_heads, self.head_v_dim, self.head_k_dim)
        if tuple(ssm_states.shape[1:]) != want:
            raise ValueError(f"ssm_states: expected [slots, {want[0]}, {want[1]}, {want[2]}] (V-first), got {list(ssm_states.shape)}")

    def _call(self, kind, q, k, v, g, beta, pool, cache_indices, cu_seqlens, A_log, dt_bias, lower_bound,
              num_accepted=None, track_state=None, track_chunk_idx=None, verify=None, beta_is_logits=True):
        use_gate = A_log is not None or lower_bound is not None
        padded = cu_seqlens is not None
        buffer, rows, parents = verify if verify is not None else (None, None, None)
        if verify is None:  # target verification: the full path
            res, key = eager_call(kind, q, k, v, g, beta, self.scale, pool, False, True, use_gate, beta_is_logits,
                                  A_log, dt_bias, lower_bound, True, cu_seqlens, cache_indices, self.backend,
                                  padded, num_accepted=num_accepted, track_state=track_state,
                                  track_chunk_idx=track_chunk_idx)
            if res is not None:
                return res
        else:
            key = None
        return call_kda(
            kind, prefill_op if kind.chunked else decode_op, q, k, v, g, beta, self.scale, pool, False, True,
            use_gate, beta_is_logits, A_log, dt_bias, lower_bound, True, cu_seqlens, cache_indices, self.backend,
            allow_padded_tokens=padded, eager_key=key, num_accepted=num_accepted, track_state=track_state,
            track_chunk_idx=track_chunk_idx, verify_buffer=buffer, verify_rows=rows, verify_parents=parents,
        )

    def extend(self, q, k, v, g, beta, *, ssm_states, cache_indices, query_start_loc,
               A_log=None, dt_bias=None, lower_bound=None, track_state=None, track_chunk_idx=None,
               beta_is_logits=True) -> torch.Tensor:
        """Prefill new tokens of a batch of requests into their pool slots.

        ``query_start_loc`` ``[N + 1]`` int32 is the batch's cu_seqlens; ``cache_indices`` int32
        ``[N]`` the slots (-1: padded request). A request whose slot was just allocated should have
        its slot zeroed by the engine, as for any pool. Returns o like ``v``; token rows past
        ``query_start_loc[-1]`` (CUDA-graph padding) are ignored and get zero output rows.
        ``track_state`` fp32 ``[N, HV, V, K]`` and ``track_chunk_idx`` int32 ``[N]``: state
        snapshots for prefix caching, as in SGLang (:func:`kimiops.chunk_kda`): row n receives
        request n's state after its first ``64 * track_chunk_idx[n]`` new tokens (-1: none).
        ``beta_is_logits=False``: ``beta`` is already the sigmoid (as some SGLang versions pass it to
        extend), used as given.
        """
        if not isinstance(beta_is_logits, bool):
            raise TypeError(f"beta_is_logits: expected a bool, got {type(beta_is_logits).__name__}")
        if query_start_loc is None:
            raise ValueError("query_start_loc: extend needs the batch's cu_seqlens (int32 [N + 1]), got None")
        q, k, v, g, beta, squeeze = self._tokens(q, k, v, g, beta)
        self._check_pool(ssm_states)
        o, _ = self._call(_EXTEND, q, k, v, g, beta, ssm_states, cache_indices, query_start_loc, A_log, dt_bias,
                          lower_bound, track_state=track_state, track_chunk_idx=track_chunk_idx,
                          beta_is_logits=beta_is_logits)
        return o.squeeze(0) if squeeze else o

    def decode(self, q, k, v, g, beta, *, ssm_states, cache_indices, query_start_loc=None,
               A_log=None, dt_bias=None, lower_bound=None, num_accepted_tokens=None) -> torch.Tensor:
        """One token per request (or ``query_start_loc`` tokens: speculative verification).

        Padded requests (``cache_indices == -1``) get zero output and leave the pool untouched.
        With ``query_start_loc``, ``cache_indices`` may be ``[N, T_max]`` with
        ``num_accepted_tokens`` ``[N]`` (vLLM's speculative verification, see
        :func:`kimiops.fused_recurrent_kda`): request n starts from slot
        ``cache_indices[n, num_accepted_tokens[n] - 1]`` and leaves the state after its token t in
        slot ``cache_indices[n, t]``.
        """
        q, k, v, g, beta, squeeze = self._tokens(q, k, v, g, beta)
        self._check_pool(ssm_states)
        check_tensor("cache_indices", cache_indices, ndim=1 if query_start_loc is None else (1, 2))
        if query_start_loc is None:
            # one token per request: batch mode [N, 1, ...], no cu_seqlens needed
            N = cache_indices.shape[0]
            if q.shape[1] < N:
                raise ValueError(f"q: expected at least one token per request ({N}), got {q.shape[1]} rows")
            H, HV, K, V = self.num_heads, self.num_v_heads, self.head_k_dim, self.head_v_dim
            if q.shape[1] == N:  # [1, N, ...] -> [N, 1, ...]: one view each (0.8 us on the CPU machine against
                # 1.9 for a slice and an unsqueeze, benchmarks/results/cpu_checks_20261201_s31/backend_views.log);
                # g's and beta's head dims are checked by the op (its errors name them)
                q, k, v = q.view(N, 1, H, K), k.view(N, 1, H, K), v.view(N, 1, HV, V)
                g, beta = g.view(N, 1, *g.shape[2:]), beta.view(N, 1, *beta.shape[2:])
            else:  # padding rows past the batch's requests
                q, k, v, g, beta = (x[0, :N].unsqueeze(1) for x in (q, k, v, g, beta))
            o, _ = self._call(_DECODE, q, k, v, g, beta, ssm_states, cache_indices, None, A_log, dt_bias, lower_bound,
                              num_accepted_tokens)
            return o.reshape(N, HV, V) if squeeze else o.reshape(1, N, HV, V)  # a view: the kernels' o is contiguous
        o, _ = self._call(_DECODE, q, k, v, g, beta, ssm_states, cache_indices, query_start_loc, A_log, dt_bias,
                          lower_bound, num_accepted_tokens)
        return o.squeeze(0) if squeeze else o

    def warmup(self, ssm_states, *, dtype: torch.dtype = torch.bfloat16, gate_dtype: torch.dtype | None = None,
               max_requests: int = 256, compile_workers: int | None = None, A_log=None, dt_bias=None,
               lower_bound=None) -> dict:
        """Compile, before the first request, the kernels that this backend's extend and decode calls
        meet (:mod:`kimiops.kda.warmup`): one padded extend per layout a varlen call can take at these
        heads and per sort block up to ``max_requests`` requests, and a padded decode step per tile
        config of the decode kernel (with and without ``query_start_loc``). Every request is padded
        (index -1), so ``ssm_states`` is neither read nor written. Pass the inputs'
        dtypes (``dtype`` for q, k, v; ``gate_dtype`` for g and beta, default ``dtype``) and the
        model's ``A_log`` / ``dt_bias`` / ``lower_bound`` as extend gets them: the kernels compile per
        dtype and gate mode. Calls with state snapshots (``track_state``) or speculative decoding are
        not covered. Call it once at start-up, outside CUDA-graph capture. The kernels compile on
        ``compile_workers`` threads (default: one per CPU of this process, at most 16, on a GPU; 1:
        each where it first launches, as a request would). Returns what ran: ``{"extend": [request
        lengths, ...], "decode": [counts], "decode_cu_seqlens": [counts], "compiled_in_background":
        kernel variants compiled on the threads}``.
        """
        self._check_pool(ssm_states)
        gate_dtype = dtype if gate_dtype is None else gate_dtype
        for name, dt in (("dtype", dtype), ("gate_dtype", gate_dtype)):
            if not isinstance(dt, torch.dtype) or not dt.is_floating_point:
                raise TypeError(f"{name}: expected a floating torch.dtype, got {dt!r}")
        _check_positive_int("max_requests", max_requests)
        if compile_workers is None:
            compile_workers = default_compile_workers(ssm_states.device)
        _check_positive_int("compile_workers", compile_workers)
        return warm_backend(self, ssm_states, dtype=dtype, gate_dtype=gate_dtype, max_requests=max_requests,
                            compile_workers=compile_workers, A_log=A_log, dt_bias=dt_bias, lower_bound=lower_bound)

    def target_verify(self, q, k, v, g, beta, *, ssm_states, cache_indices, query_start_loc,
                      intermediate_states_buffer, intermediate_state_indices, cache_steps=None, A_log=None,
                      dt_bias=None, lower_bound=None, retrieve_parent_token=None) -> torch.Tensor:
        """Verify chains of draft tokens without touching the pool (SGLang's ``target_verify``,
        :mod:`kimiops.kda.verify`).

        Request n (rows of ``query_start_loc``, at most ``cache_steps`` tokens) starts from
        ``ssm_states[cache_indices[n]]`` (-1: padded request, zero output, nothing written) and the
        state after its token t is written to ``intermediate_states_buffer[intermediate_state_indices[n], t]``
        (``[rows, cache_steps, HV, V, K]``, fp32 or bf16; row -1: none). ``ssm_states`` is read
        only. ``cache_steps``, when given, must be the buffer's second dimension. Tree drafts:
        ``retrieve_parent_token`` int32 ``[N, >= cache_steps]``, token t > 0 continues from the
        state after token ``retrieve_parent_token[n, t]`` of its request (-1: the pool state),
        read back from the buffer. Returns o like ``v``.
        """
        if cache_steps is not None and isinstance(intermediate_states_buffer, torch.Tensor) and \
                intermediate_states_buffer.dim() == 5 and cache_steps != intermediate_states_buffer.shape[1]:
            raise ValueError(f"cache_steps: expected the buffer's second dimension "
                             f"({intermediate_states_buffer.shape[1]}), got {cache_steps}")
        q, k, v, g, beta, squeeze = self._tokens(q, k, v, g, beta)
        self._check_pool(ssm_states)
        check_tensor("cache_indices", cache_indices, ndim=1)
        o, _ = self._call(_DECODE, q, k, v, g, beta, ssm_states, cache_indices, query_start_loc, A_log, dt_bias,
                          lower_bound, verify=(intermediate_states_buffer, intermediate_state_indices,
                                               retrieve_parent_token))
        return o.squeeze(0) if squeeze else o
