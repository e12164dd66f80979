"""Route Hugging Face transformers' Kimi-Linear KDA to kimiops.

transformers' ``kimi_linear`` modeling code (``transformers.models.kimi_linear.modeling_kimi_linear``)
runs each KDA layer (``KimiLinearDeltaAttention``) through three pieces this module can route:

- ``chunk_kimi_delta_attention``: the chunked KDA used for prefill (and for any call without a
  cached state or with more than one token), routed to :func:`kimiops.chunk_kda`;
- ``recurrent_kimi_delta_attention``: the token-recurrent KDA used for one-token decode steps,
  routed to :func:`kimiops.fused_recurrent_kda`;
- ``KimiLinearForgetGate``: the softplus forget gate module, whose gate math is routed to
  :func:`kimiops.kda_gate` (its two projections stay transformers' ``nn.Linear`` layers).

How the routing takes effect. ``KimiLinearDeltaAttention.forward`` calls the two KDA functions by
their *module-global* names, so the names are looked up in the modeling module's ``__dict__`` on
every call. (Both are wrapped at import time by ``use_kernel_func_from_hub_with_fallback``, which
picks flash-linear-attention or the torch fallback once; the class decorator
``use_kernelized_func`` only records the functions for the ``kernels`` package's ``kernelize`` and
is not on the call path.) :func:`enable` therefore replaces those two module globals, and the
forget gate's ``forward`` on its class, with *routers*. A router sends a call to kimiops when the
routing is on for the current call and to the saved original otherwise:

- ``enable()`` (no model) turns it on for every Kimi-Linear model in the process;
- ``enable(model)`` turns it on for that model's KDA layers only: a forward pre-hook on each of its
  ``KimiLinearDeltaAttention`` layers marks the current thread as "inside a kimiops layer" and a
  forward hook (``always_call=True``, so also on exceptions) clears the mark.

:func:`disable` undoes either; when nothing is enabled any more, the original objects are put back
(the module globals and ``KimiLinearForgetGate.forward`` are then identical, ``is``, to what they
were before the first :func:`enable`). :func:`enable` is idempotent.

Argument conventions handled exactly as transformers passes them: ``query, key, value`` positional
(``q, k, v`` accepted too), ``g`` (fp32 log decay from the forget gate), ``beta`` (already a
sigmoid), ``initial_state`` ``[B, H, K, V]`` (cast to fp32 as transformers does),
``output_final_state`` (``None`` final state when false), ``use_qk_l2norm_in_kernel``, and the
chunked function's ``chunk_size`` (ignored: kimiops chooses its own tiling). FLA-compatible
keywords that kimiops implements (``scale``, ``cu_seqlens``, ``use_gate_in_kernel``,
``use_beta_sigmoid_in_kernel``, ``A_log``, ``dt_bias``, ``lower_bound``) are honoured; any other
keyword (the ``**kwargs`` transformers forwards from the layer) is ignored, as transformers' own
wrapper does. Outputs are in the input dtype, the final state fp32 ``[B, H, K, V]``.

kimiops' KDA ops have no backward: a call with grad enabled and an input that requires grad runs
transformers' original function instead (with a one-time warning). Run inference under
``torch.no_grad()`` or ``torch.inference_mode()`` (``generate`` does).
"""

from __future__ import annotations

import functools
import importlib
import inspect
import threading
import warnings
import weakref
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Callable

import torch

__all__ = ["enable", "disable", "is_enabled", "enabled"]

MODELING_MODULE = "transformers.models.kimi_linear.modeling_kimi_linear"
CHUNK_NAME = "chunk_kimi_delta_attention"
RECURRENT_NAME = "recurrent_kimi_delta_attention"
LAYER_CLASS_NAME = "KimiLinearDeltaAttention"
GATE_CLASS_NAME = "KimiLinearForgetGate"
# Attributes the routed forget gate reads from the module; without them the gate keeps its own forward.
GATE_ATTRS = ("f_a_proj", "f_b_proj", "dt_bias", "A_log", "head_dim")

# Positional parameter order of transformers' torch functions, used when a signature cannot be read.
_DEFAULT_ORDER = {
    CHUNK_NAME: ("query", "key", "value", "g", "beta", "chunk_size", "initial_state", "output_final_state",
                 "use_qk_l2norm_in_kernel"),
    RECURRENT_NAME: ("query", "key", "value", "g", "beta", "initial_state", "output_final_state",
                     "use_qk_l2norm_in_kernel"),
}
_ALIASES = {"q": "query", "k": "key", "v": "value"}
_REQUIRED = ("query", "key", "value", "g", "beta")
# FLA-compatible keywords forwarded to kimiops (same names and meaning there).
_PASSTHROUGH = ("scale", "cu_seqlens", "use_gate_in_kernel", "use_beta_sigmoid_in_kernel", "A_log", "dt_bias",
                "lower_bound")
_BACKENDS = (None, "auto", "triton", "torch")

_lock = threading.RLock()
_tls = threading.local()  # .stack: backends of the kimiops-enabled KDA layers the thread is inside


@dataclass
class _Installed:
    """What :func:`_install` replaced, to put back exactly."""

    modeling: ModuleType
    version: str
    originals: dict[str, Any]                     # module-global name -> original object
    layer_cls: type
    gate_cls: type | None = None
    gate_forward: Callable | None = None          # original KimiLinearForgetGate.forward
    gate_forward_in_dict: bool = False            # whether forward was defined on gate_cls itself
    warned: set = field(default_factory=set)


@dataclass
class _ModelEntry:
    backend: str | None
    handles: list


_installed: _Installed | None = None
_global_on = False
_global_backend: str | None = None
_models: "weakref.WeakKeyDictionary[torch.nn.Module, _ModelEntry]" = weakref.WeakKeyDictionary()

_OFF = object()  # marker: route this call to transformers' original


# --------------------------------------------------------------------------- discovery
def _transformers_version() -> str:
    try:
        import transformers
    except ImportError as e:  # pragma: no cover - exercised only without transformers
        raise ImportError(
            "kimiops.integrations.transformers needs Hugging Face transformers; install it with "
            "`pip install 'kimiops[transformers]'`"
        ) from e
    return getattr(transformers, "__version__", "unknown")


def _load_modeling() -> tuple[ModuleType, str]:
    version = _transformers_version()
    try:
        modeling = importlib.import_module(MODELING_MODULE)
    except ImportError as e:
        raise RuntimeError(
            f"transformers {version} has no Kimi-Linear modeling code ({MODELING_MODULE} failed to import: {e}); "
            "kimiops routes transformers >= 4.57's kimi_linear models"
        ) from e
    return modeling, version


def _code_names(fn: Callable) -> tuple[set[str], dict | None]:
    """Global/attribute names used by ``fn``'s innermost wrapped function, and its globals dict."""
    inner = inspect.unwrap(fn)
    code = getattr(inner, "__code__", None)
    return (set(code.co_names) if code is not None else set()), getattr(inner, "__globals__", None)


def _discover(modeling: ModuleType, version: str) -> _Installed:
    """Find the hooks kimiops routes; raise RuntimeError naming the transformers version if missing."""
    missing = [n for n in (CHUNK_NAME, RECURRENT_NAME, LAYER_CLASS_NAME) if not hasattr(modeling, n)]
    if missing:
        raise RuntimeError(
            f"transformers {version}: {MODELING_MODULE} lacks {', '.join(missing)}; this version's Kimi-Linear "
            "code is not one kimiops knows how to route (known: transformers 5.17 - 5.24)"
        )
    for n in (CHUNK_NAME, RECURRENT_NAME):
        if not callable(getattr(modeling, n)):
            raise RuntimeError(f"transformers {version}: {MODELING_MODULE}.{n} is not callable")
    layer_cls = getattr(modeling, LAYER_CLASS_NAME)
    if not (isinstance(layer_cls, type) and issubclass(layer_cls, torch.nn.Module)):
        raise RuntimeError(f"transformers {version}: {MODELING_MODULE}.{LAYER_CLASS_NAME} is not an nn.Module class")
    # The routing works by replacing module globals: check the layer's forward really looks them up there.
    names, fglobals = _code_names(layer_cls.forward)
    not_called = [n for n in (CHUNK_NAME, RECURRENT_NAME) if n not in names]
    if not_called or fglobals is not modeling.__dict__:
        raise RuntimeError(
            f"transformers {version}: {LAYER_CLASS_NAME}.forward does not call "
            f"{' and '.join(not_called) or 'the KDA functions'} through {MODELING_MODULE}'s globals, so kimiops "
            "cannot route it in this version"
        )
    inst = _Installed(
        modeling=modeling, version=version, layer_cls=layer_cls,
        originals={CHUNK_NAME: getattr(modeling, CHUNK_NAME), RECURRENT_NAME: getattr(modeling, RECURRENT_NAME)},
    )
    gate_cls = getattr(modeling, GATE_CLASS_NAME, None)
    if isinstance(gate_cls, type) and issubclass(gate_cls, torch.nn.Module):
        inst.gate_cls = gate_cls
        inst.gate_forward = gate_cls.forward
        inst.gate_forward_in_dict = "forward" in gate_cls.__dict__
    return inst


# --------------------------------------------------------------------------- routing decision
def _current_backend():
    """The kimiops backend for the current call, or ``_OFF`` to run transformers' original."""
    stack = getattr(_tls, "stack", None)
    if stack:
        return stack[-1]
    if _global_on:
        return _global_backend
    return _OFF


def _warn_once(key: str, message: str) -> None:
    inst = _installed
    if inst is not None and key in inst.warned:
        return
    if inst is not None:
        inst.warned.add(key)
    warnings.warn(message, RuntimeWarning, stacklevel=3)


def _needs_grad(*tensors) -> bool:
    return torch.is_grad_enabled() and any(isinstance(t, torch.Tensor) and t.requires_grad for t in tensors)


def _param_order(name: str, original: Callable) -> tuple[str, ...]:
    try:
        params = inspect.signature(original).parameters.values()
    except (TypeError, ValueError):
        return _DEFAULT_ORDER[name]
    order = tuple(p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))
    return order or _DEFAULT_ORDER[name]


def _bind(fname: str, order: tuple[str, ...], args: tuple, kwargs: dict) -> dict:
    if len(args) > len(order):
        raise TypeError(f"{fname}() takes at most {len(order)} positional arguments ({len(args)} given)")
    bound = dict(zip(order, args))
    for key, value in kwargs.items():
        key = _ALIASES.get(key, key)
        if key in bound:
            raise TypeError(f"{fname}() got multiple values for argument '{key}'")
        bound[key] = value
    absent = [n for n in _REQUIRED if bound.get(n) is None]
    if absent:
        raise TypeError(f"{fname}() missing required tensor argument(s): {', '.join(absent)}")
    return bound


def _last_dim_contiguous(x: torch.Tensor) -> torch.Tensor:
    return x if x.stride(-1) == 1 else x.contiguous()


def _make_kda_router(fname: str, original: Callable) -> Callable:
    """A drop-in for transformers' ``fname`` that runs kimiops when routing is on for the call."""
    import kimiops

    op_name = "chunk_kda" if fname == CHUNK_NAME else "fused_recurrent_kda"
    order = _param_order(fname, original)

    @functools.wraps(original)
    def router(*args, **kwargs):
        backend = _current_backend()
        if backend is _OFF:
            return original(*args, **kwargs)
        b = _bind(fname, order, args, kwargs)
        q, k, v, g, beta = (b[n] for n in _REQUIRED)
        if _needs_grad(q, k, v, g, beta):
            _warn_once(
                "grad:" + fname,
                f"kimiops: {fname} called with grad enabled on inputs that require grad; kimiops' KDA has no "
                "backward, so this call runs transformers' implementation. Use torch.no_grad() or "
                "torch.inference_mode() for inference.",
            )
            return original(*args, **kwargs)
        if b.get("head_first"):
            raise ValueError(f"{fname}: head_first=True is not supported; pass [B, T, H, K] tensors")
        initial_state = b.get("initial_state")
        if initial_state is not None:
            # transformers computes in fp32 and casts the incoming state with `.to(value)`.
            initial_state = initial_state.to(device=q.device, dtype=torch.float32)
        extra = {n: b[n] for n in _PASSTHROUGH if b.get(n) is not None}
        op = getattr(kimiops, op_name)  # looked up per call so tests can instrument kimiops
        o, final_state = op(
            _last_dim_contiguous(q), _last_dim_contiguous(k), _last_dim_contiguous(v),
            _last_dim_contiguous(g), beta,
            initial_state=initial_state,
            output_final_state=bool(b.get("output_final_state", False)),
            use_qk_l2norm_in_kernel=bool(b.get("use_qk_l2norm_in_kernel", False)),
            backend=backend,
            **extra,
        )
        if o.dtype != q.dtype:  # transformers returns the query's dtype
            o = o.to(q.dtype)
        return o, (final_state if b.get("output_final_state", False) else None)

    router.__kimiops_router__ = True
    router.__kimiops_original__ = original
    return router


def _make_gate_router(original_forward: Callable) -> Callable:
    """A drop-in for ``KimiLinearForgetGate.forward`` computing the gate with :func:`kimiops.kda_gate`."""
    import kimiops

    @functools.wraps(original_forward)
    def forward(self, hidden_states, *args, **kwargs):
        if _current_backend() is _OFF or args or kwargs or not all(hasattr(self, a) for a in GATE_ATTRS):
            return original_forward(self, hidden_states, *args, **kwargs)
        raw = self.f_b_proj(self.f_a_proj(hidden_states))
        raw = raw.view(*hidden_states.shape[:-1], -1, self.head_dim)
        # Same math as transformers: -exp(A_log[h]) * softplus(raw + dt_bias) in fp32, returned in fp32.
        return kimiops.kda_gate(raw, A_log=self.A_log.reshape(-1), dt_bias=self.dt_bias, output_dtype=torch.float32)

    forward.__kimiops_router__ = True
    forward.__kimiops_original__ = original_forward
    return forward


# --------------------------------------------------------------------------- install / uninstall
def _install() -> _Installed:
    """Replace the module globals and the gate's forward with routers (once); return the record."""
    global _installed
    if _installed is not None:
        return _installed
    modeling, version = _load_modeling()
    inst = _discover(modeling, version)
    for name, original in inst.originals.items():
        if getattr(original, "__kimiops_router__", False):  # e.g. a module reloaded under us
            raise RuntimeError(f"{MODELING_MODULE}.{name} is already a kimiops router; call disable() first")
    for name, original in inst.originals.items():
        setattr(modeling, name, _make_kda_router(name, original))
    if inst.gate_cls is not None:
        inst.gate_cls.forward = _make_gate_router(inst.gate_forward)
    _installed = inst
    return inst


def _uninstall() -> None:
    global _installed
    inst = _installed
    if inst is None:
        return
    for name, original in inst.originals.items():
        setattr(inst.modeling, name, original)
    if inst.gate_cls is not None:
        if inst.gate_forward_in_dict:
            inst.gate_cls.forward = inst.gate_forward
        else:
            del inst.gate_cls.forward
    _installed = None


def _maybe_uninstall() -> None:
    if not _global_on and len(_models) == 0:
        _uninstall()


# --------------------------------------------------------------------------- per-model hooks
def _pre_hook(backend):
    def hook(module, args):
        stack = getattr(_tls, "stack", None)
        if stack is None:
            stack = _tls.stack = []
        stack.append(backend)
    return hook


def _post_hook(module, args, output):
    stack = getattr(_tls, "stack", None)
    if stack:
        stack.pop()


def _check_backend(backend) -> str | None:
    if backend not in _BACKENDS:
        raise ValueError(f"backend: expected one of None, 'auto', 'triton', 'torch', got {backend!r}")
    return backend


def _check_model(model) -> None:
    if not isinstance(model, torch.nn.Module):
        raise TypeError(
            f"model: expected a torch.nn.Module (a transformers Kimi-Linear model), got {type(model).__name__}"
        )


# --------------------------------------------------------------------------- public API
def enable(model: torch.nn.Module | None = None, *, backend: str | None = None) -> torch.nn.Module | None:
    """Route transformers' Kimi-Linear KDA (chunked, recurrent and forget gate) to kimiops.

    Args:
        model: a transformers Kimi-Linear model (``KimiLinearForCausalLM``, ``KimiLinearModel`` or any
            module holding ``KimiLinearDeltaAttention`` layers): only its KDA layers are routed.
            ``None`` routes every Kimi-Linear model of the process, including ones built later.
        backend: kimiops backend for the routed calls (``None``/``"auto"``, ``"triton"``, ``"torch"``);
            see :func:`kimiops.chunk_kda`. Calling ``enable`` again with another backend updates it.
    Returns:
        ``model`` (so ``model = enable(model)`` chains), or ``None`` for the global form.
    Raises:
        ImportError: transformers is not installed.
        RuntimeError: this transformers version lacks the functions kimiops routes (message names it).
        TypeError: ``model`` is not an ``nn.Module``.
        ValueError: ``model`` has no Kimi-Linear KDA layer, or ``backend`` is unknown.

    Idempotent: enabling what is already enabled changes nothing (except the backend).
    """
    global _global_on, _global_backend
    backend = _check_backend(backend)
    if model is not None:
        _check_model(model)
    with _lock:
        fresh = _installed is None
        inst = _install()
        try:
            if model is None:
                _global_on, _global_backend = True, backend
                return None
            entry = _models.get(model)
            if entry is not None:
                if entry.backend == backend:
                    return model
                for h in entry.handles:
                    h.remove()
                del _models[model]
            layers = [m for m in model.modules() if isinstance(m, inst.layer_cls)]
            if not layers:
                found = sorted({type(m).__name__ for m in model.modules()})[:8]
                raise ValueError(
                    f"model: no {LAYER_CLASS_NAME} layer (transformers' Kimi-Linear KDA) found in "
                    f"{type(model).__name__}; module types seen: {', '.join(found)}"
                )
            handles = []
            for layer in layers:
                handles.append(layer.register_forward_pre_hook(_pre_hook(backend)))
                handles.append(layer.register_forward_hook(_post_hook, always_call=True))
            _models[model] = _ModelEntry(backend=backend, handles=handles)
            return model
        except BaseException:
            if fresh:
                _maybe_uninstall()
            raise


def disable(model: torch.nn.Module | None = None) -> None:
    """Undo :func:`enable`.

    Args:
        model: undo ``enable(model)`` for this model only (a no-op if it was not enabled; a model
            enabled only through the global form stays routed until ``disable()``). ``None`` undoes
            everything: the global form and every per-model enable.

    When nothing stays enabled, transformers' original functions are restored: the modeling module's
    ``chunk_kimi_delta_attention`` and ``recurrent_kimi_delta_attention`` and
    ``KimiLinearForgetGate.forward`` are again the very objects they were before :func:`enable`.
    """
    global _global_on, _global_backend
    if model is not None:
        _check_model(model)
    with _lock:
        if model is None:
            _global_on, _global_backend = False, None
            for entry in list(_models.values()):
                for h in entry.handles:
                    h.remove()
            _models.clear()
        else:
            entry = _models.pop(model, None)
            if entry is not None:
                for h in entry.handles:
                    h.remove()
        _maybe_uninstall()


def is_enabled(model: torch.nn.Module | None = None) -> bool:
    """Whether kimiops routing is on globally (``model=None``) or for ``model`` (per model or globally)."""
    if model is None:
        return _global_on
    return _global_on or model in _models


class enabled:
    """Context manager: ``with enabled(model, backend=...):`` enables on entry and, on exit, puts the
    routing of ``model`` (or the global routing for ``model=None``) back the way it was."""

    def __init__(self, model: torch.nn.Module | None = None, *, backend: str | None = None):
        self.model, self.backend = model, backend

    def __enter__(self):
        with _lock:
            if self.model is None:
                self._prev = (_global_on, _global_backend)
            else:
                entry = _models.get(self.model)
                self._prev = (entry is not None, entry.backend if entry is not None else None)
            enable(self.model, backend=self.backend)
        return self.model

    def __exit__(self, *exc) -> bool:
        global _global_on, _global_backend
        was_on, prev_backend = self._prev
        with _lock:
            if self.model is None:
                _global_on, _global_backend = was_on, prev_backend
                _maybe_uninstall()
            elif was_on:
                enable(self.model, backend=prev_backend)
            else:
                disable(self.model)
        return False
