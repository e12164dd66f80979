"""Environment variables read on hot paths (every eager call).

``os.environ.get`` of an unset variable costs 0.72 us on the CPU machine and 1.29 us on the H200
host (``benchmarks/results/decode_host_cpu_20261130h.log``,
``logs_h200_20261130i/decode_host_gpu_before.log``): ``Mapping.get`` raises and catches
``KeyError`` inside. :func:`env_var` looks the name up in the mapping's own dict instead (0.09 us
on the CPU machine, ``decode_host_cpu_20261130i.log``; 0.12-0.26 us on the H200 host) and still
sees every change made through ``os.environ`` (``monkeypatch.setenv``, ``os.environ[...] = ...``),
which updates that dict.
"""

from __future__ import annotations

import os

# CPython's os.environ keeps its entries in ``_data`` under ``encodekey(name)``; other
# implementations fall back to the public mapping
_DATA = getattr(os.environ, "_data", None)
_ENCODE = getattr(os.environ, "encodekey", None)
_DECODE = getattr(os.environ, "decodevalue", None)
_FAST = isinstance(_DATA, dict) and callable(_ENCODE) and callable(_DECODE)
_keys: dict[str, object] = {}


def env_var(name: str) -> str | None:
    """``os.environ.get(name)``, cheap when the variable is unset."""
    if not _FAST:
        return os.environ.get(name)
    key = _keys.get(name)
    if key is None:
        key = _keys[name] = _ENCODE(name)
    raw = _DATA.get(key)
    return None if raw is None else _DECODE(raw)
