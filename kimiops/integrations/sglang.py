"""Run SGLang's KDA layers on kimiops kernels.

SGLang runs the KDA layers of Kimi-Linear-style models through ``KDAKernelDispatcher``
(``sglang.srt.layers.attention.linear.kda_backend``). For its default linear-attention backend,
``triton``, the dispatcher builds one ``TritonKDAKernel`` and calls four methods on it (SGLang
0.5.23, ``kernels/kda_triton.py`` and ``kda_backend.py``; what this module was written against):

===================  =====================================================================
``extend``           prefill: ``q, k, v`` ``[1, T, H, K]``, raw gate ``g`` ``[1, T, HV, K]`` with
                     ``A_log`` (any shape of HV elements), ``dt_bias`` ``[HV * K]`` and
                     ``lower_bound``; ``beta`` ``[1, T, HV]`` as logits (``beta_is_raw=True``) or
                     already a sigmoid; pool ``ssm_states`` ``[slots, HV, V, K]`` at
                     ``cache_indices``; snapshots ``track_state`` / ``track_chunk_idx``.
``decode``           one token per request: ``a`` (raw gate, ``[T, HV * K]``), ``b`` (beta logits,
                     ``[1, T, HV]``), ``query_start_loc``.
``packed_decode``    the same from the short convolution's output ``mixed_qkv``
                     ``[B, 2 * H * K + HV * V]`` (q, k, v side by side), ``scale`` given.
``target_verify``    speculative verification into ``intermediate_states_buffer`` (chains, or
                     trees through ``retrieve_parent_token``); the pool is only read.
===================  =====================================================================

:func:`enable` replaces ``TritonKDAKernel`` in the dispatcher's module by a subclass,
``KimiopsKDAKernel``, whose four methods run kimiops (:func:`kimiops.fused_recurrent_kda` for the
packed decode, :class:`kimiops.KDABackend` for the others; views of the inputs, no host
synchronization, CUDA-graph safe) and hand a call to SGLang's own Triton kernel (``super()``)
where kimiops does not implement what it asks for:

- ReplaySSM ring caches (``replayssm_*``, ``cache_ring``) and FlashInfer's fused accept
  (``fused_accept_*``);
- ``extend(return_intermediate_states=True)`` when SGLang needs the per-chunk states ``h``
  (no ``track_state`` snapshot buffer and a non-empty ``track_ssm_h_src``);
- a verify buffer whose second dimension is not ``cache_steps`` (SGLang's kernel then strides
  the buffer by ``cache_steps``), or none (later SGLang sources pass ``None`` with ReplaySSM);
- devices without kimiops kernels (AMD GPUs, unknown families), and any keyword this module
  does not know that carries a value other than ``None`` / ``False``.

What the kernel declares to SGLang (the flags SGLang's backend and dispatcher read before they
call, :data:`CAPABILITIES`: packed decode, the prefix cache's ``track_state`` snapshot, the bounded
gate in decode) it decides when it is built: all three where kimiops serves the process's GPU, else
what SGLang's own kernel declares. A call it hands back that asks for something it declared and
SGLang's kernel does not (a snapshot, a bounded gate, a packed decode) raises
``NotImplementedError`` instead of running without it.

Every call is counted in ``kernel.calls`` (a :class:`collections.Counter` keyed by
``(method, route)``, route ``"kimiops"`` or ``"sglang:<reason>"``), so a deployment can check
where its steps ran. Being a subclass of ``TritonKDAKernel`` the kernel passes the dispatcher's
``isinstance`` checks: the safe gate (``lower_bound``) and breakable prefill CUDA graphs stay
available.

Activation. SGLang runs its model in scheduler processes that it starts itself, and calls its
general plugins (entry-point group ``sglang.srt.plugins``) early in each of them. kimiops
registers :func:`plugin` there; it calls :func:`enable` when the environment variable
``KIMIOPS_SGLANG`` is ``1`` (as ``KIMIOPS_DEBUG``) and does nothing otherwise, so installing
kimiops never changes an SGLang deployment by itself. In a single process (tests, notebooks),
call :func:`enable` before the engine builds its attention backend; :func:`disable` restores
SGLang's class.
"""

from __future__ import annotations

import collections
from typing import Any

import torch

from kimiops.env import env_var
from kimiops.integrations.engine import (FLA_CHUNK_TABLES, dense, engine_module, flat, last_dim_dense,
                                         packed_token_views, serves_current_gpu, unserved_reason)
from kimiops.kda.backend import KDABackend
from kimiops.kda.decode import fused_recurrent_kda
from kimiops.validation import check_tensor

__all__ = ["KDAKernelMethods", "CAPABILITIES", "kernel_class", "enable", "disable", "is_enabled", "plugin",
           "DISPATCHER_MODULE"]

DISPATCHER_MODULE = "sglang.srt.layers.attention.linear.kda_backend"
KERNEL_NAME = "TritonKDAKernel"
ENV_SWITCH = "KIMIOPS_SGLANG"

# Keywords SGLang 0.5.23 passes that only steer its own kernels (metadata they precompute, host
# copies, logging ids); kimiops needs none of them.
_IGNORED = FLA_CHUNK_TABLES | frozenset({
    "extend_seq_lens_cpu", "extend_prefix_lens", "layer_id", "is_spec_decode",
    "track_ssm_h_src", "track_ssm_h_batch_src", "state_checkpoint_cu_starts", "num_state_checkpoints",
    "state_checkpoint_every_n_tokens", "state_checkpoint_indices", "seq_lens_cpu", "safe_gate_lower_bound",
})
_IGNORED_EXTEND = _IGNORED | {"track_state", "track_chunk_idx"}  # extend handles the snapshots itself

# Flags of SGLang's KDA kernels that its backend and dispatcher read before they call (later SGLang
# sources, ``kernels/kernel_backend.py``: a kernel without the snapshot flag gets no snapshot buffer, one
# without the bounded-gate flag no ``lower_bound`` decode), with the value taken for a kernel class of
# SGLang's that does not set one (releases before the flag).
CAPABILITIES = {"supports_packed_decode": False, "supports_track_state_snapshot": False,
                "supports_bounded_gate_decode": True}


class KDAKernelMethods:
    """SGLang's KDA kernel interface on kimiops; mixed in before SGLang's ``TritonKDAKernel``
    (:func:`kernel_class`), whose methods take the calls kimiops hands back.

    Attributes:
        calls: ``Counter`` of ``(method, route)``.
        kimiops_backend: ``backend`` of the :class:`kimiops.KDABackend` objects (``None``: auto).
    """

    kimiops_backend: str | None = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.calls: collections.Counter = collections.Counter()
        self._backends: dict[tuple, KDABackend] = {}
        # instance attributes, as SGLang's own kernels set flags that depend on the machine; SGLang
        # builds its attention backends on their device, so the current one is the layers' GPU
        self._sglang_declares = {flag: bool(getattr(self, flag, default)) for flag, default in CAPABILITIES.items()}
        served = serves_current_gpu()
        for flag, declared in self._sglang_declares.items():
            setattr(self, flag, served or declared)

    # -- helpers -----------------------------------------------------------------------------

    def _backend(self, H: int, HV: int, K: int, V: int, scale: float | None) -> KDABackend:
        key = (H, HV, K, V, scale)
        be = self._backends.get(key)
        if be is None:
            be = self._backends[key] = KDABackend(H, K, V, HV, scale=scale, backend=self.kimiops_backend)
        return be

    def _route(self, device: torch.device, kwargs: dict, ignored: frozenset = _IGNORED) -> str | None:
        """``None`` when kimiops takes the call, else the reason it goes to SGLang's kernel."""
        return unserved_reason(device, kwargs, ignored)

    def _count(self, method: str, reason: str | None) -> None:
        self.calls[(method, "kimiops" if reason is None else f"sglang:{reason}")] += 1

    def _refuse_hand_back(self, method: str, reason: str, flag: str, asked: bool) -> None:
        """Raise where a call that goes to SGLang's kernel (``reason``) asks for what this kernel
        declared (``flag``, which made SGLang ask) and SGLang's kernel does not declare."""
        if asked and getattr(self, flag) and not self._sglang_declares[flag]:
            raise NotImplementedError(
                f"{method}: kimiops hands this call to SGLang's own kernel ({reason}), which does not declare "
                f"{flag} and would run it without what it asks for; kimiops declared it for the calls it runs "
                f"on this GPU. Run this deployment without the integration ({ENV_SWITCH}=0)")

    @staticmethod
    def _gate(a: torch.Tensor, T: int, HV: int, K: int) -> torch.Tensor:
        """The raw gate as ``[1, T, HV, K]`` (SGLang passes ``[T, HV * K]`` to decode and verify;
        rows past q's T, CUDA-graph padding, are dropped); a view when ``a`` is contiguous."""
        check_tensor("a", a)
        return a.reshape(-1, HV * K)[:T].reshape(1, T, HV, K)

    @staticmethod
    def _beta(b: torch.Tensor, T: int, HV: int) -> torch.Tensor:
        """Beta logits as ``[1, T, HV]`` (SGLang passes ``[1, T, HV]`` or ``[T, HV]``), padding rows dropped."""
        check_tensor("b", b)
        return b.reshape(-1, HV)[:T].reshape(1, T, HV)

    @staticmethod
    def _a_log(A_log):
        return flat(A_log)  # SGLang keeps it as [1, 1, HV, 1]

    # -- SGLang's methods ---------------------------------------------------------------------

    def extend(self, q, k, v, g, beta, *, ssm_states, cache_indices, query_start_loc, A_log=None, dt_bias=None,
               lower_bound=None, beta_is_raw=False, return_intermediate_states=False, **kwargs):
        """Prefill into the pool; returns ``o`` ``[1, T, HV, V]``, or ``(o, None)`` when SGLang asks
        for intermediate states and reads only the ``track_state`` snapshot (see the module doc)."""
        reason = self._route(q.device, kwargs, _IGNORED_EXTEND)
        track_state, track_chunk_idx = kwargs.get("track_state"), kwargs.get("track_chunk_idx")
        if reason is None and return_intermediate_states and track_state is None:
            needs_h = kwargs.get("track_ssm_h_src")
            if needs_h is None or needs_h.numel() > 0:
                reason = "per-chunk states h"
        self._count("extend", reason)
        if reason is not None:
            self._refuse_hand_back("extend", reason, "supports_track_state_snapshot",
                                   track_state is not None or track_chunk_idx is not None)
            return super().extend(q, k, v, g, beta, ssm_states=ssm_states, cache_indices=cache_indices,
                                  query_start_loc=query_start_loc, A_log=A_log, dt_bias=dt_bias,
                                  lower_bound=lower_bound, beta_is_raw=beta_is_raw,
                                  return_intermediate_states=return_intermediate_states, **kwargs)
        H, K = q.shape[-2:]
        HV, V = v.shape[-2:]
        if A_log is None:  # SGLang: g is then already the log decay, and lower_bound unused
            dt_bias = lower_bound = None
        be = self._backend(H, HV, K, V, None)
        q, k, v = last_dim_dense(q), last_dim_dense(k), last_dim_dense(v)
        o = be.extend(q, k, v, g, beta, ssm_states=ssm_states, cache_indices=dense(cache_indices),
                      query_start_loc=query_start_loc, A_log=self._a_log(A_log), dt_bias=dt_bias,
                      lower_bound=lower_bound, track_state=track_state, track_chunk_idx=track_chunk_idx,
                      beta_is_logits=bool(beta_is_raw))
        return (o, None) if return_intermediate_states else o

    def decode(self, q, k, v, a, b, *, A_log, dt_bias, ssm_states, cache_indices, query_start_loc,
               lower_bound=None, **kwargs):
        """One decode step; returns ``o`` ``[1, T, HV, V]``."""
        reason = self._route(q.device, kwargs)
        self._count("decode", reason)
        if reason is not None:
            self._refuse_hand_back("decode", reason, "supports_bounded_gate_decode", lower_bound is not None)
            return super().decode(q, k, v, a, b, A_log=A_log, dt_bias=dt_bias, ssm_states=ssm_states,
                                  cache_indices=cache_indices, query_start_loc=query_start_loc,
                                  lower_bound=lower_bound, **kwargs)
        T, H, K = q.shape[-3:]
        HV, V = v.shape[-2:]
        be = self._backend(H, HV, K, V, None)
        q, k, v = last_dim_dense(q), last_dim_dense(k), last_dim_dense(v)
        return be.decode(q, k, v, self._gate(a, T, HV, K), self._beta(b, T, HV), ssm_states=ssm_states,
                         cache_indices=dense(cache_indices), query_start_loc=query_start_loc, A_log=self._a_log(A_log),
                         dt_bias=dt_bias, lower_bound=lower_bound)

    def packed_decode(self, mixed_qkv, a, b, *, A_log, dt_bias, scale, ssm_states, cache_indices, num_v_heads,
                      head_v_dim, lower_bound=None, **kwargs):
        """One token per request from ``mixed_qkv`` ``[B, 2 * H * K + HV * V]``; q, k and v are
        views of it. Returns ``o`` ``[1, B, HV, V]``."""
        reason = self._route(mixed_qkv.device, kwargs)
        self._count("packed_decode", reason)
        if reason is not None:
            self._refuse_hand_back("packed_decode", reason, "supports_packed_decode", True)
            self._refuse_hand_back("packed_decode", reason, "supports_bounded_gate_decode", lower_bound is not None)
            return super().packed_decode(mixed_qkv, a, b, A_log=A_log, dt_bias=dt_bias, scale=scale,
                                         ssm_states=ssm_states, cache_indices=cache_indices,
                                         num_v_heads=num_v_heads, head_v_dim=head_v_dim, lower_bound=lower_bound,
                                         **kwargs)
        check_tensor("mixed_qkv", mixed_qkv, ndim=2)
        B, width = mixed_qkv.shape
        HV, V, K = num_v_heads, head_v_dim, ssm_states.shape[-1]
        qk = width - HV * V
        if qk <= 0 or qk % (2 * K) or mixed_qkv.stride(-1) != 1:
            raise ValueError(f"mixed_qkv: expected [B, 2 * H * {K} + {HV} * {V}] (q, k, v side by side, stride 1 "
                             f"along the last dimension), got shape {list(mixed_qkv.shape)}, strides "
                             f"{mixed_qkv.stride()}")
        H = qk // (2 * K)
        # one token per request: views of mixed_qkv straight into the op (batch mode, no cu_seqlens)
        q, k, v = packed_token_views(mixed_qkv, H, HV, K, V)
        o, _ = fused_recurrent_kda(
            q, k, v, a.reshape(B, 1, HV, K), b.reshape(B, 1, HV), scale, ssm_states, use_qk_l2norm_in_kernel=True,
            use_gate_in_kernel=True, use_beta_sigmoid_in_kernel=True, A_log=self._a_log(A_log), dt_bias=dt_bias,
            lower_bound=lower_bound, state_v_first=True, ssm_state_indices=dense(cache_indices),
            backend=self.kimiops_backend)
        return o.view(1, B, HV, V)

    def target_verify(self, A_log, dt_bias, q, k, v, a, b, *, ssm_states, cache_indices, query_start_loc,
                      intermediate_states_buffer, intermediate_state_indices, cache_steps,
                      retrieve_parent_token=None, lower_bound=None, **kwargs):
        """Verify draft tokens; the pool is read only. Returns ``o`` ``[1, T, HV, V]``."""
        reason = self._route(q.device, kwargs)
        if reason is None and intermediate_states_buffer is None:
            reason = "no verify buffer"
        elif reason is None and intermediate_states_buffer.shape[1] != cache_steps:
            reason = "buffer steps != cache_steps"
        self._count("target_verify", reason)
        if reason is not None:
            return super().target_verify(A_log, dt_bias, q, k, v, a, b, ssm_states=ssm_states,
                                         cache_indices=cache_indices, query_start_loc=query_start_loc,
                                         intermediate_states_buffer=intermediate_states_buffer,
                                         intermediate_state_indices=intermediate_state_indices,
                                         cache_steps=cache_steps, retrieve_parent_token=retrieve_parent_token,
                                         lower_bound=lower_bound, **kwargs)
        T, H, K = q.shape[-3:]
        HV, V = v.shape[-2:]
        N = query_start_loc.shape[0] - 1  # SGLang's per-request tables may be longer than the batch
        parents = None if retrieve_parent_token is None else retrieve_parent_token[:N]
        be = self._backend(H, HV, K, V, None)
        q, k, v = last_dim_dense(q), last_dim_dense(k), last_dim_dense(v)
        return be.target_verify(
            q, k, v, self._gate(a, T, HV, K), self._beta(b, T, HV), ssm_states=ssm_states,
            cache_indices=dense(cache_indices[:N]), query_start_loc=query_start_loc,
            intermediate_states_buffer=intermediate_states_buffer,
            intermediate_state_indices=dense(intermediate_state_indices[:N]), cache_steps=cache_steps,
            A_log=self._a_log(A_log), dt_bias=dt_bias, lower_bound=lower_bound, retrieve_parent_token=parents)


def kernel_class(base: type) -> type:
    """``KimiopsKDAKernel``: :class:`KDAKernelMethods` over ``base`` (SGLang's ``TritonKDAKernel``)."""
    if not isinstance(base, type):
        raise TypeError(f"base: expected SGLang's kernel class, got {type(base).__name__}")
    return type("KimiopsKDAKernel", (KDAKernelMethods, base), {"__module__": __name__, "sglang_base": base})


def _dispatcher_module():
    return engine_module(DISPATCHER_MODULE, "kimiops.integrations.sglang",
                         "SGLang 0.5.23 or a release with the same kernel interface")


def enable() -> type:
    """Make SGLang's ``triton`` KDA backend run on kimiops in this process; returns the kernel
    class now in place. Idempotent. Call it before the engine builds its attention backends."""
    module = _dispatcher_module()
    current = getattr(module, KERNEL_NAME, None)
    if current is None:
        raise ImportError(f"{DISPATCHER_MODULE} has no {KERNEL_NAME}: this SGLang release is not supported")
    if issubclass(current, KDAKernelMethods):
        return current
    cls = kernel_class(current)
    setattr(module, KERNEL_NAME, cls)
    return cls


def disable() -> None:
    """Put SGLang's own ``TritonKDAKernel`` back (kernels built already keep their class)."""
    module = _dispatcher_module()
    current = getattr(module, KERNEL_NAME, None)
    if isinstance(current, type) and issubclass(current, KDAKernelMethods):
        setattr(module, KERNEL_NAME, current.sglang_base)


def is_enabled() -> bool:
    """Whether SGLang's dispatcher module currently builds kimiops' kernel (False without SGLang)."""
    try:
        module = _dispatcher_module()
    except ImportError:
        return False
    current = getattr(module, KERNEL_NAME, None)
    return isinstance(current, type) and issubclass(current, KDAKernelMethods)


def plugin() -> Any:
    """SGLang general plugin (entry point ``sglang.srt.plugins: kimiops``): :func:`enable` when
    ``KIMIOPS_SGLANG=1``, nothing otherwise."""
    return enable() if env_var(ENV_SWITCH) == "1" else None
