"""Capability families: the one place that decides which backend may run where.

A *family* groups GPUs that run the same kernels: ``"sm8x"`` (Ampere/Ada), ``"sm90"``
(Hopper), ``"sm10x"`` (datacenter Blackwell: SM100, SM103, SM107 ...), ``"sm12x"`` (consumer
Blackwell) and ``"cpu"`` when there is no CUDA device. A ROCm build of torch reports AMD GPUs
as CUDA devices with capabilities such as (9, 4) (MI300); they are the family ``"rocm"``, which
no kernel backend claims. Backends declare the families they support; nothing else in the
library looks at SM numbers.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from kimiops.env import env_var as read_env
from kimiops.interpreter import INTERPRETED_AT_IMPORT

import torch

FAMILIES = ("sm8x", "sm90", "sm10x", "sm12x")
GPU_FAMILIES = frozenset(FAMILIES)


def arch_family(capability: tuple[int, int] | None) -> str:
    """Family of a compute capability ``(major, minor)``; ``None`` means no GPU -> ``"cpu"``.

    Only the major version decides: every minor revision of a family behaves alike (SM107 as
    SM100). Majors outside the known families map to ``"sm{major}x"``, which no backend claims,
    so automatic dispatch falls back to the portable path there.
    """
    if capability is None:
        return "cpu"
    if not (isinstance(capability, tuple) and len(capability) == 2):
        raise TypeError(f"capability: expected a (major, minor) tuple, got {capability!r}")
    major, _minor = capability
    if major == 9:
        return "sm90"
    return f"sm{major}x"


ROCM_FAMILY = "rocm"


def _read_family_of_cuda_index(index: int) -> str:
    if torch.version.hip is not None:  # AMD GPU: its capability numbers are not NVIDIA SMs
        return ROCM_FAMILY
    return arch_family(torch.cuda.get_device_capability(index))


_cached_family_of_cuda_index = functools.lru_cache(maxsize=None)(_read_family_of_cuda_index)


def _family_of_cuda_index(index: int) -> str:
    # torch.compile traces the ops' Python wrappers, which call this; Dynamo would trace through the
    # lru_cache wrapper with a UserWarning ("Dynamo detected a call to a functools.lru_cache-wrapped
    # function", torch 2.11), so traced code reads the capability directly (a constant to Dynamo).
    if torch.compiler.is_compiling():
        return _read_family_of_cuda_index(index)
    return _cached_family_of_cuda_index(index)


def device_family(device: torch.device | str | int | None = None) -> str:
    """Family of ``device`` (default: the current CUDA device, or ``"cpu"`` without CUDA).

    Cached per device index, so a process with mixed GPUs gets each one's own family.
    """
    if device is None:
        if not torch.cuda.is_available():
            return "cpu"
        return _family_of_cuda_index(torch.cuda.current_device())
    device = torch.device(device) if not isinstance(device, int) else torch.device("cuda", device)
    if device.type != "cuda":
        return "cpu"
    index = device.index if device.index is not None else torch.cuda.current_device()
    return _family_of_cuda_index(index)


#: Families whose GPUs have programmatic dependent launch (``griddepcontrol``, compute
#: capability 9.0 and newer): a kernel launched with it may start while the previous kernel on
#: the stream is still running, and must ``gdc_wait`` before reading that kernel's results.
PDL_FAMILIES = frozenset({"sm90", "sm10x", "sm12x"})

#: Families whose measured linear tables may name the Gluon kernel (``kimiops.gemm.skinny_gluon``:
#: built on Hopper's wgmma and TMA, which later families do not run as such).
GLUON_LINEAR_FAMILIES = frozenset({"sm90"})


@functools.lru_cache(maxsize=None)
def supports_pdl(device: torch.device) -> bool:
    """Whether kernels on ``device`` may be launched with programmatic dependent launch."""
    return device.type == "cuda" and device_family(device) in PDL_FAMILIES


@dataclass(frozen=True)
class Backend:
    """An implementation of an op and the families it may run on."""

    name: str
    families: frozenset[str] | None  # None: every family, CPU included (portable torch code)
    description: str = ""

    def supports(self, family: str) -> bool:
        return self.families is None or family in self.families


def requested_backend(op: str, requested: object, backends: dict[str, Backend], env_var: str) -> str:
    """The backend name asked for: ``requested`` (argument), else the environment variable
    ``env_var``, else ``"auto"``; checked by name (``TypeError`` / ``ValueError`` naming where a bad
    name came from), not against a family."""
    source = "backend"
    if requested is None:
        requested = read_env(env_var) or "auto"
        source = f"backend (from the environment variable {env_var})"
    if not isinstance(requested, str):
        raise TypeError(f"backend: expected a str or None, got {type(requested).__name__}")
    if requested != "auto" and requested not in backends:
        raise ValueError(f"{source}: expected one of {['auto', *backends]} for {op}, got {requested!r}")
    return requested


def resolve_backend(
    op: str,
    requested: str | None,
    family: str,
    backends: dict[str, Backend],
    auto_order: tuple[str, ...],
    env_var: str = "KIMIOPS_BACKEND",
) -> str:
    """Pick the backend of ``op`` for ``family``.

    ``requested`` (argument) wins over the environment variable ``env_var``; ``None`` or
    ``"auto"`` takes the first of ``auto_order`` that supports the family. A backend forced on a
    family it does not support raises ``RuntimeError`` naming the family and the backends that
    would run there.
    """
    requested = requested_backend(op, requested, backends, env_var)
    if requested == "auto":
        for name in auto_order:
            if backends[name].supports(family):
                return name
        raise RuntimeError(f"{op}: no backend supports capability family {family!r}")
    if not backends[requested].supports(family):
        usable = [name for name, b in backends.items() if b.supports(family)]
        raise RuntimeError(
            f"{op}: backend {requested!r} does not support capability family {family!r}; "
            f"backends that run on {family!r}: {usable}"
        )
    if requested == "triton" and family == "cpu" and not INTERPRETED_AT_IMPORT:
        raise RuntimeError(
            f"{op}: backend 'triton' on CPU tensors runs the kernels in Triton's interpreter; "
            "set TRITON_INTERPRET=1 in the environment before importing kimiops (it was not set "
            "when kimiops was imported)"
        )
    return requested
