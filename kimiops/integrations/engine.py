"""What the serving-engine adapters (:mod:`~kimiops.integrations.sglang`,
:mod:`~kimiops.integrations.vllm`) share: which devices kimiops serves, and importing the engine's
module with an error that says what is missing."""

from __future__ import annotations

import importlib
from types import ModuleType

import torch

from kimiops.arch import GPU_FAMILIES, device_family

__all__ = ["serves", "engine_module"]


def serves(device: torch.device) -> bool:
    """kimiops serves CPU tensors (its torch path) and GPUs of the families it has kernels for;
    the adapters hand everything else back to the engine's own kernels."""
    return device.type == "cpu" or (device.type == "cuda" and device_family(device) in GPU_FAMILIES)


def engine_module(name: str, integration: str, requirement: str) -> ModuleType:
    """``importlib.import_module(name)``; an ImportError naming ``integration`` (the adapter) and
    ``requirement`` (the engine releases it supports) when the engine is not there."""
    try:
        return importlib.import_module(name)
    except ImportError as err:
        raise ImportError(f"{integration} needs {name} ({requirement}): {err}") from err
