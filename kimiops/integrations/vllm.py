"""Run vLLM's KDA prefill on kimiops kernels.

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
``fused_recurrent_kda_packed_decode`` decode, one token per request from the convolution's output.
``fused_recurrent_kda``               speculative decode.
====================================  ==============================================================

:func:`enable` replaces ``chunk_kda_with_fused_gate`` in that module with
:func:`chunk_kda_with_fused_gate` below, which runs :func:`kimiops.chunk_kda` (gate, beta sigmoid
and q/k L2 norm in its kernels, V-first states, no host synchronization) and hands the call to
vLLM's own function where kimiops does not serve it: devices without kimiops kernels (AMD GPUs,
unknown families), head dims its chunk kernels are not built for (``CHUNK_KERNEL_DIMS``; kimiops
would run its torch path) and keywords this module does not know that carry a value other than
``None`` / ``False``. Every call is counted in :data:`calls` (``(function, route)``, route ``"kimiops"`` or
``"vllm:<reason>"``).

Decode stays on vLLM's kernels:

- vLLM pads state indices with its null block, slot 0 (``NULL_BLOCK_ID`` in
  ``vllm/v1/attention/backends/utils.py``), and its decode kernels skip every index ``<= 0``;
  kimiops' decode kernels skip only ``-1``, so they would read and write slot 0 for padded rows.
- Measured on the H200 against vLLM 0.33's kernels (``benchmarks/bench_vllm_kda.py``,
  ``benchmarks/results/logs_h200_20261201f/``): kimiops' decode is 1.09-1.16x faster from 8 requests
  on, but at 1 request 0.89-0.92x (0.98-1.01x with cold pool slots) and its speculative step 0.82x.

Prefill measured the same way: 1.43-1.56x faster than vLLM's (B1 T8192 to B1 T32768, 32 heads).

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
import sys
from typing import Any

import torch

from kimiops.env import env_var
from kimiops.integrations.engine import engine_module, serves, unsupported_keyword
from kimiops.kda.dispatch import CHUNK_KERNEL_DIMS
from kimiops.kda.prefill import chunk_kda

__all__ = ["chunk_kda_with_fused_gate", "enable", "disable", "is_enabled", "plugin", "calls", "KDA_MODULE"]

KDA_MODULE = "vllm.models.kimi_k3.nvidia.ops.third_party.kda"
PREFILL_NAME = "chunk_kda_with_fused_gate"
ENV_SWITCH = "KIMIOPS_VLLM"

calls: collections.Counter = collections.Counter()
"""``(function, route)`` -> number of calls since import."""

kimiops_backend: str | None = None
"""``backend`` of the :func:`kimiops.chunk_kda` calls (``None``: automatic)."""

_originals: dict[str, Any] = {}  # vLLM's functions, saved by enable()


def _dense(x: torch.Tensor) -> torch.Tensor:
    """``x`` with a contiguous last dimension (vLLM's prefill convolution returns transposed views,
    which vLLM's own prefill copies too)."""
    return x if x.stride(-1) == 1 else x.contiguous()


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
        cu_seqlens: int32/int64 ``[N + 1]`` (T may exceed ``cu_seqlens[-1]``).
        out: None, or ``[1, T, HV, V]`` that receives the output (a copy: kimiops writes its own).
    Returns:
        ``(o [1, T, HV, V] in v's dtype (``out`` when given), final states [N, HV, V, K] fp32 or None)``.
        Unlike vLLM's, this function leaves ``v`` as it was (vLLM's writes its output into ``v``
        when ``out`` is None).
    """
    reason = None
    unknown = unsupported_keyword(kwargs)
    if unknown is not None:
        reason = f"keyword {unknown}"
    elif not serves(q.device):
        reason = "device"
    elif q.device.type != "cpu" and not all(d in CHUNK_KERNEL_DIMS for d in (q.shape[-1], v.shape[-1])):
        reason = f"head dims {q.shape[-1]}, {v.shape[-1]}"  # kimiops would run its torch path: vLLM's is faster
    if reason is not None:
        original = _originals.get(PREFILL_NAME)
        if original is None:
            raise ValueError(f"chunk_kda_with_fused_gate: kimiops does not serve this call ({reason}) and vLLM's own "
                             f"function is not loaded (enable() saves it)")
        calls[(PREFILL_NAME, f"vllm:{reason}")] += 1
        return original(
            q, k, v, raw_g, raw_beta, A_log, g_bias, scale=scale, initial_state=initial_state,
            output_final_state=output_final_state, lower_bound=lower_bound,
            use_qk_l2norm_in_kernel=use_qk_l2norm_in_kernel, cu_seqlens=cu_seqlens, out=out, **kwargs)
    calls[(PREFILL_NAME, "kimiops")] += 1
    o, final = chunk_kda(
        _dense(q), _dense(k), _dense(v), _dense(raw_g), raw_beta, scale, initial_state, output_final_state,
        use_qk_l2norm_in_kernel, use_gate_in_kernel=True, use_beta_sigmoid_in_kernel=True,
        A_log=None if A_log is None else A_log.reshape(-1), dt_bias=None if g_bias is None else g_bias.reshape(-1),
        lower_bound=lower_bound,
        state_v_first=True, cu_seqlens=cu_seqlens, backend=kimiops_backend)
    if out is not None:
        out.copy_(o)
        o = out
    return o, final


chunk_kda_with_fused_gate.kimiops = True


def _kda_module():
    return engine_module(KDA_MODULE, "kimiops.integrations.vllm", "vLLM 0.33 or a release with the same KDA functions")


def _patch(module) -> None:
    current = getattr(module, PREFILL_NAME, None)
    if current is None:
        raise ImportError(f"{KDA_MODULE} has no {PREFILL_NAME}: this vLLM release is not supported")
    if getattr(current, "kimiops", False):
        return
    _originals[PREFILL_NAME] = current
    setattr(module, PREFILL_NAME, chunk_kda_with_fused_gate)


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
    """Import vLLM's KDA module and make its prefill run on kimiops in this process. Idempotent."""
    _patch(_kda_module())


def disable() -> None:
    """Put vLLM's own prefill function back and remove :func:`plugin`'s import hook."""
    _remove_hook()
    module = sys.modules.get(KDA_MODULE)
    if module is not None and getattr(getattr(module, PREFILL_NAME, None), "kimiops", False):
        setattr(module, PREFILL_NAME, _originals[PREFILL_NAME])


def is_enabled() -> bool:
    """Whether vLLM's KDA module is imported and holds kimiops' prefill (imports nothing)."""
    module = sys.modules.get(KDA_MODULE)
    return module is not None and bool(getattr(getattr(module, PREFILL_NAME, None), "kimiops", False))


def plugin() -> None:
    """vLLM general plugin (entry point ``vllm.general_plugins: kimiops``). With ``KIMIOPS_VLLM=1``:
    patches vLLM's KDA module now if it is imported already, else when vLLM imports it. Nothing
    otherwise. Idempotent."""
    if env_var(ENV_SWITCH) != "1":
        return
    module = sys.modules.get(KDA_MODULE)
    if module is not None:
        _patch(module)
    elif not any(isinstance(f, _PatchOnImport) for f in sys.meta_path):
        sys.meta_path.insert(0, _PatchOnImport())
