"""Run vLLM's KDA prefill and decode on kimiops kernels.

vLLM (0.33; what this module was written against) runs the KDA layer of Kimi-Linear
(``KimiGatedDeltaNetAttention._forward`` in ``vllm/model_executor/layers/mamba/gdn/
kimi_gdn_linear_attn.py``) and of Kimi-K3 on NVIDIA GPUs on three functions that it imports from
``vllm.models.kimi_k3.nvidia.ops.third_party.kda`` at every call (:data:`KDA_MODULE`):

====================================  ==============================================================
``chunk_kda_with_fused_gate``         prefill: ``q, k, v`` ``[1, T, H, K]``, raw gate ``raw_g``
                                      ``[1, T, H, K]`` with ``A_log`` ``[H]``, ``g_bias`` ``[H * K]``
                                      and ``lower_bound``; beta logits ``raw_beta`` ``[1, T, H]``;
                                      initial states gathered from the pool ``[N, H, V, K]``;
                                      returns ``(o, final states [N, H, V, K])``.
``fused_recurrent_kda_packed_decode`` decode, one token per request: ``mixed_qkv`` ``[B, 2 H K + H V]``
                                      (the convolution's output), ``raw_g`` ``[1, B, H, K]``,
                                      ``raw_beta`` ``[1, B, H]``, the pool ``[slots, H, V, K]``
                                      updated in place at ``state_indices`` ``[B]``.
``fused_recurrent_kda``               speculative decode: several tokens per request (``cu_seqlens``),
                                      ``ssm_state_indices`` ``[N, T_max]`` and
                                      ``num_accepted_tokens`` ``[N]``.
====================================  ==============================================================

:func:`enable` replaces all three in that module with the functions of the same names below. The
prefill runs :func:`kimiops.chunk_kda` and the two decodes :func:`kimiops.fused_recurrent_kda`
(gate, beta sigmoid and q/k L2 norm in the kernels, V-first states, no host synchronization). vLLM
pads state indices with its null block, slot 0 (``NULL_BLOCK_ID`` in
``vllm/v1/attention/backends/utils.py``), and its decode kernels skip every index ``<= 0``: the
decode adapters pass ``pad_slot_id=0``, so slot 0 is never read or written either. A call goes back
to vLLM's own function where kimiops does not serve it: devices without kimiops kernels (AMD GPUs,
unknown families), for the prefill head dims its chunk kernels are not built for
(``CHUNK_KERNEL_DIMS``; kimiops would run its torch path), and keywords this module does not know
that carry a value other than ``None`` / ``False`` (the prefill ignores FLA's chunk tables, which
later vLLM sources pass: ``engine.FLA_CHUNK_TABLES``). Every call is counted in :data:`calls`
(``(function, route)``, route ``"kimiops"`` or ``"vllm:<reason>"``).

Measured on the H200 against vLLM 0.33's kernels (``benchmarks/bench_vllm_kda.py``; docs/vllm.md):
prefill 1.43-1.56x faster (B1 T8192 to B1 T32768, 32 heads); packed decode even at 1 request
(2.89 against 2.87 us), 1.10x at 8 and 1.13x at 64; speculative decode 1.05x at 1 request and even
from 8 on (``logs_h200_20261201g/r4_bench_vllm.log``).

Activation. vLLM calls its general plugins (entry-point group ``vllm.general_plugins``) early in
every process it starts, before it loads a model. kimiops registers :func:`plugin` there; with the
environment variable ``KIMIOPS_VLLM`` at ``1`` it patches the KDA module when vLLM imports it (an
import hook: importing the module from the plugin would import vLLM's Kimi-K3 model package, which
its package ``__init__`` pulls in, before vLLM is ready for it), and does nothing otherwise, so
installing kimiops never changes a vLLM deployment by itself. In a single process (tests,
notebooks) call :func:`enable`, which imports and patches the module at once; :func:`disable`
restores vLLM's function and removes the hook.
"""

from __future__ import annotations

import collections
import importlib.abc
import importlib.util
import os
import sys
import warnings
from typing import Any

import torch

from kimiops.env import env_var
from kimiops.integrations.engine import (FLA_CHUNK_TABLES, dense, engine_module, flat, last_dim_dense,
                                         packed_token_views, unserved_reason)
from kimiops.kda.decode import fused_recurrent_kda as kimiops_decode
from kimiops.kda.dispatch import CHUNK_KERNEL_DIMS
from kimiops.kda.prefill import _op as prefill_op
from kimiops.kda.runner import PREFILL, call_kda, eager_call
from kimiops.validation import check_tensor

__all__ = ["chunk_kda_with_fused_gate", "fused_recurrent_kda_packed_decode", "fused_recurrent_kda", "enable",
           "disable", "is_enabled", "plugin", "calls", "KDA_MODULE"]

KDA_MODULE = "vllm.models.kimi_k3.nvidia.ops.third_party.kda"
PREFILL_NAME = "chunk_kda_with_fused_gate"
PACKED_NAME = "fused_recurrent_kda_packed_decode"
SPEC_NAME = "fused_recurrent_kda"
ENV_SWITCH = "KIMIOPS_VLLM"
NULL_SLOT = 0  # vLLM's NULL_BLOCK_ID: the pool slot of padded requests

calls: collections.Counter = collections.Counter()
"""``(function, route)`` -> number of calls since import."""

kimiops_backend: str | None = None
"""``backend`` of the kimiops calls (``None``: automatic)."""

_originals: dict[str, Any] = {}  # vLLM's functions, saved by enable()


def chunk_kda_with_fused_gate(q, k, v, raw_g, raw_beta, A_log, g_bias, scale=None, initial_state=None,
                              output_final_state=False, lower_bound=None, use_qk_l2norm_in_kernel=False,
                              cu_seqlens=None, out=None, **kwargs):
    """vLLM's ``chunk_kda_with_fused_gate`` on :func:`kimiops.chunk_kda`.

    Args (as vLLM passes them):
        q, k: ``[1, T, H, K]``; v: ``[1, T, HV, V]``; bf16/fp16/fp32, any strides.
        raw_g: ``[1, T, HV, K]`` gate logits; raw_beta: ``[1, T, HV]`` beta logits.
        A_log: ``HV`` elements (``[HV]``, or the older ``[1, 1, HV, 1]``), fp32.
        g_bias: ``HV * K`` elements or None; lower_bound: None (softplus gate) or in [-5, 0).
        scale: None for ``K ** -0.5``.
        initial_state: None or ``[N, HV, V, K]`` fp32; output_final_state: return the final states.
        use_qk_l2norm_in_kernel: L2-normalize q and k.
        cu_seqlens: int32/int64 ``[N + 1]`` (T may exceed ``cu_seqlens[-1]``: padding rows, whose
            output rows are zeros).
        out: None, or ``[1, T, HV, V]`` that receives the output (a copy: kimiops writes its own).
    Returns:
        ``(o [1, T, HV, V] in v's dtype (``out`` when given), final states [N, HV, V, K] fp32 or None)``.
        Unlike vLLM's, this function leaves ``v`` as it was (vLLM's writes its output into ``v``
        when ``out`` is None).
    """
    reason = unserved_reason(q.device, kwargs, FLA_CHUNK_TABLES)
    if reason is None and q.device.type != "cpu" and not all(d in CHUNK_KERNEL_DIMS
                                                             for d in (q.shape[-1], v.shape[-1])):
        reason = f"head dims {q.shape[-1]}, {v.shape[-1]}"  # kimiops would run its torch path: vLLM's is faster
    if reason is not None:
        return _hand_off(PREFILL_NAME, reason, (q, k, v, raw_g, raw_beta, A_log, g_bias), dict(
            scale=scale, initial_state=initial_state, output_final_state=output_final_state, lower_bound=lower_bound,
            use_qk_l2norm_in_kernel=use_qk_l2norm_in_kernel, cu_seqlens=cu_seqlens, out=out, **kwargs))
    calls[(PREFILL_NAME, "kimiops")] += 1
    if out is not None:
        check_tensor("out", out, shape=tuple(v.shape), device=v.device)
    # vLLM's prefill convolution returns transposed views (vLLM's own prefill copies them too); with
    # cu_seqlens the token rows may run past cu_seqlens[-1] (padding), as KDABackend.extend allows
    args = (last_dim_dense(q), last_dim_dense(k), last_dim_dense(v), last_dim_dense(raw_g), raw_beta, scale,
            initial_state, output_final_state, use_qk_l2norm_in_kernel, True, True, flat(A_log), flat(g_bias),
            lower_bound, True, dense(cu_seqlens), None, kimiops_backend)
    padded = cu_seqlens is not None
    res, key = eager_call(PREFILL, *args, allow_padded_tokens=padded)
    o, final = res if res is not None else call_kda(PREFILL, prefill_op, *args, allow_padded_tokens=padded,
                                                    eager_key=key)
    if out is not None:
        out.copy_(o)
        o = out
    return o, final


def _hand_off(name: str, reason: str, args: tuple, kwargs: dict):
    """vLLM's own ``name`` on the call, counted under ``"vllm:<reason>"``."""
    original = _originals.get(name)
    if original is None:
        raise ValueError(f"{name}: kimiops does not serve this call ({reason}) and vLLM's own function is not "
                         f"loaded (enable() saves it)")
    calls[(name, f"vllm:{reason}")] += 1
    return original(*args, **kwargs)


def fused_recurrent_kda_packed_decode(mixed_qkv, raw_g, raw_beta, A_log, dt_bias, lower_bound, initial_state,
                                      state_indices, scale=None, out=None, **kwargs):
    """vLLM's ``fused_recurrent_kda_packed_decode`` on :func:`kimiops.fused_recurrent_kda`: one
    token per request, batch mode, the views of ``mixed_qkv`` read in place.

    Args (as vLLM passes them; ``H, V, K`` from the pool):
        mixed_qkv: ``[B, 2 H K + H V]``, each row q, k, v of one request's token side by side (last
            dim contiguous); bf16/fp16/fp32.
        raw_g: ``[1, B, H, K]`` gate logits; raw_beta: ``[1, B, H]`` beta logits.
        A_log: ``H`` elements; dt_bias: ``H * K`` elements or None; lower_bound: None (softplus
            gate) or in [-5, 0).
        initial_state: the pool ``[slots, H, V, K]`` (fp32 or bf16), updated in place.
        state_indices: int32/int64 ``[B]``; an index ``<= 0`` (vLLM's null block, or -1) is a
            padded request: its state is neither read nor written and its output row is zero.
        scale: None for ``K ** -0.5``; out: None or ``[1, B, H, V]`` that receives the output.
    Returns:
        ``(o [1, B, H, V] in mixed_qkv's dtype (``out`` when given), initial_state)``.
    """
    reason = unserved_reason(mixed_qkv.device, kwargs)
    if reason is not None:
        return _hand_off(PACKED_NAME, reason, (mixed_qkv, raw_g, raw_beta, A_log, dt_bias, lower_bound, initial_state,
                                               state_indices), dict(scale=scale, out=out, **kwargs))
    calls[(PACKED_NAME, "kimiops")] += 1
    if initial_state.dim() != 4:
        raise ValueError(f"initial_state: expected a pool [slots, H, V, K], got shape {list(initial_state.shape)}")
    H, V, K = initial_state.shape[1:]
    if mixed_qkv.dim() != 2 or mixed_qkv.shape[1] != 2 * H * K + H * V or mixed_qkv.stride(1) != 1:
        raise ValueError(f"mixed_qkv: expected [B, 2*H*K + H*V] = [B, {2 * H * K + H * V}] (H, V, K = {H}, {V}, {K} "
                         f"from initial_state) with stride 1 along the last dimension, got shape "
                         f"{list(mixed_qkv.shape)}, strides {mixed_qkv.stride()}")
    B = mixed_qkv.shape[0]
    check_tensor("raw_g", raw_g, shape=(1, B, H, K))
    check_tensor("raw_beta", raw_beta, shape=(1, B, H))
    q, k, v = packed_token_views(mixed_qkv, H, H, K, V)
    o, _ = kimiops_decode(
        q, k, v, raw_g.reshape(B, 1, H, K), raw_beta.reshape(B, 1, H), scale, initial_state,
        use_qk_l2norm_in_kernel=True, use_gate_in_kernel=True, use_beta_sigmoid_in_kernel=True,
        A_log=flat(A_log), dt_bias=flat(dt_bias), lower_bound=lower_bound, state_v_first=True,
        ssm_state_indices=dense(state_indices), pad_slot_id=NULL_SLOT, backend=kimiops_backend)
    o = o.view(1, B, H, V)
    if out is not None:
        out.copy_(o)
        o = out
    return o, initial_state


# vLLM's switch between its gate fused into the recurrent kernel and a separate gate kernel: the same
# math, which kimiops always fuses
_SPEC_IGNORED = frozenset({"fuse_gate"})


def fused_recurrent_kda(q, k, v, raw_g, raw_beta, A_log, dt_bias, lower_bound, initial_state, cu_seqlens,
                        ssm_state_indices, num_accepted_tokens=None, out=None, **kwargs):
    """vLLM's ``fused_recurrent_kda`` (speculative decode) on :func:`kimiops.fused_recurrent_kda`.

    Args (as vLLM passes them):
        q, k: ``[1, T, H, K]``; v: ``[1, T, H, V]`` (views with a contiguous last dim).
        raw_g: ``[1, T, H, K]``; raw_beta: ``[1, T, H]``; A_log, dt_bias, lower_bound: as for
            :func:`fused_recurrent_kda_packed_decode`.
        initial_state: the pool ``[slots, H, V, K]``, updated in place.
        cu_seqlens: int32/int64 ``[N + 1]``; ssm_state_indices: ``[N, T_max]`` (or ``[N]``);
            num_accepted_tokens: None or ``[N]`` in ``[1, T_max]``. Request n starts from slot
            ``ssm_state_indices[n, num_accepted_tokens[n] - 1]`` and the state after its token t
            goes to slot ``ssm_state_indices[n, t]``; indices ``<= 0`` are padding (a start slot:
            the request reads and writes nothing and its output rows are zero; a token's slot:
            that state is not kept).
        out: None or ``[1, T, H, V]`` that receives the output. ``fuse_gate`` (vLLM's kernel
            choice) changes nothing here.
    Returns:
        ``(o [1, T, H, V] in v's dtype (``out`` when given), initial_state)``; scale ``K ** -0.5``.
    """
    reason = unserved_reason(q.device, kwargs, _SPEC_IGNORED)
    if reason is not None:
        return _hand_off(SPEC_NAME, reason, (q, k, v, raw_g, raw_beta, A_log, dt_bias, lower_bound, initial_state,
                                             cu_seqlens, ssm_state_indices),
                         dict(num_accepted_tokens=num_accepted_tokens, out=out, **kwargs))
    calls[(SPEC_NAME, "kimiops")] += 1
    o, _ = kimiops_decode(
        q, k, v, raw_g, raw_beta, None, initial_state, use_qk_l2norm_in_kernel=True, use_gate_in_kernel=True,
        use_beta_sigmoid_in_kernel=True, A_log=flat(A_log), dt_bias=flat(dt_bias), lower_bound=lower_bound,
        state_v_first=True, cu_seqlens=dense(cu_seqlens),
        ssm_state_indices=ssm_state_indices if ssm_state_indices.dim() == 2 else dense(ssm_state_indices),
        num_accepted_tokens=dense(num_accepted_tokens), pad_slot_id=NULL_SLOT, backend=kimiops_backend)
    if out is not None:
        out.copy_(o)
        o = out
    return o, initial_state


_ADAPTERS = {PREFILL_NAME: chunk_kda_with_fused_gate, PACKED_NAME: fused_recurrent_kda_packed_decode,
             SPEC_NAME: fused_recurrent_kda}
for _adapter in _ADAPTERS.values():
    _adapter.kimiops = True


def _kda_module():
    return engine_module(KDA_MODULE, "kimiops.integrations.vllm", "vLLM 0.33 or a release with the same KDA functions")


def _patch(module) -> None:
    missing = [name for name in _ADAPTERS if getattr(module, name, None) is None]
    if missing:
        raise ImportError(f"{KDA_MODULE} has no {', '.join(missing)}: this vLLM release is not supported")
    for name, adapter in _ADAPTERS.items():
        current = getattr(module, name)
        if not getattr(current, "kimiops", False):
            _originals[name] = current
            setattr(module, name, adapter)


class _PatchOnImport(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Import hook for :data:`KDA_MODULE`: finds it with the other finders and patches it right after
    it has run (:func:`plugin`)."""

    def find_spec(self, fullname, path, target=None):
        if fullname != KDA_MODULE:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None and spec.loader is not None:
                self._loader = spec.loader
                spec.loader = self
                return spec
        return None

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        self._loader.exec_module(module)
        _patch(module)


def _remove_hook() -> None:
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, _PatchOnImport)]


def enable() -> None:
    """Import vLLM's KDA module and make its prefill and decode run on kimiops in this process.
    Idempotent."""
    _patch(_kda_module())


def disable() -> None:
    """Put vLLM's own functions back and remove :func:`plugin`'s import hook."""
    _remove_hook()
    module = sys.modules.get(KDA_MODULE)
    if module is None:
        return
    for name in _ADAPTERS:
        if getattr(getattr(module, name, None), "kimiops", False):
            setattr(module, name, _originals[name])


def is_enabled() -> bool:
    """Whether vLLM's KDA module is imported and holds kimiops' three functions (imports nothing)."""
    module = sys.modules.get(KDA_MODULE)
    return module is not None and all(getattr(getattr(module, name, None), "kimiops", False) for name in _ADAPTERS)


def _kda_module_source() -> str | None:
    """Where vLLM's KDA module would load from, found in the installed ``vllm`` package's folders
    without importing any of it below the top level (a package folder or a ``.py`` file); ``None``
    when there is none (no vLLM, or a release without Kimi-K3's KDA module)."""
    try:
        spec = importlib.util.find_spec("vllm")
    except ValueError:  # a ``vllm`` in sys.modules without a spec (a stand-in): nothing to look in
        spec = None
    for root in (spec.submodule_search_locations or ()) if spec is not None else ():
        base = os.path.join(root, *KDA_MODULE.split(".")[1:])
        for candidate in (os.path.join(base, "__init__.py"), base + ".py"):
            if os.path.isfile(candidate):
                return candidate
    return None


def plugin() -> None:
    """vLLM general plugin (entry point ``vllm.general_plugins: kimiops``). With ``KIMIOPS_VLLM=1``:
    patches vLLM's KDA module now if it is imported already, else when vLLM imports it (an import
    hook), and warns (``RuntimeWarning``) where the installed vLLM's folders hold no such module
    (a release without Kimi-K3's KDA module: nothing will run on kimiops). Nothing otherwise.
    Idempotent."""
    if env_var(ENV_SWITCH) != "1":
        return
    module = sys.modules.get(KDA_MODULE)
    if module is not None:
        _patch(module)
        return
    if _kda_module_source() is None:
        warnings.warn(f"{ENV_SWITCH}=1, but the installed vLLM's folders hold no {KDA_MODULE} (vLLM 0.33 or a "
                      f"release with the same KDA functions): unless vLLM imports that module, nothing is patched "
                      f"and its KDA layers run on vLLM's own kernels", RuntimeWarning, stacklevel=2)
    if not any(isinstance(f, _PatchOnImport) for f in sys.meta_path):
        sys.meta_path.insert(0, _PatchOnImport())
