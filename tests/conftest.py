"""Test setup: without CUDA, Triton kernels run in Triton's interpreter.

``TRITON_INTERPRET=1`` must be set before triton (and kimiops) are imported, since kernels are
wrapped at decoration time; tests marked ``gpu`` are skipped when no CUDA device is present.

With CUDA the interpreter is off for the whole process, so the CPU tests (those neither marked
``gpu`` nor taking the ``device`` fixture: Triton kernels on CPU tensors, host-side checks) are
skipped there; run them with the GPU hidden (``CUDA_VISIBLE_DEVICES= python3 -m pytest``), as CI
does on its CPU-only machine. Tests taking ``device`` run on CUDA when present.
"""

import os
from pathlib import Path

import torch

if not torch.cuda.is_available():
    os.environ["TRITON_INTERPRET"] = "1"


import pytest  # noqa: E402

HAS_CUDA = torch.cuda.is_available()


def pytest_collection_modifyitems(config, items):
    if HAS_CUDA:
        cpu_only = pytest.mark.skip(reason="CPU test (Triton's interpreter on CPU tensors): run it with the GPU "
                                           "hidden, CUDA_VISIBLE_DEVICES= python3 -m pytest")
        for item in items:
            if "gpu" not in item.keywords and "device" not in getattr(item, "fixturenames", ()):
                item.add_marker(cpu_only)
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def device():
    """Device of the kernel tests: CUDA when present, else CPU (Triton interpreter)."""
    return torch.device("cuda" if HAS_CUDA else "cpu")


@pytest.fixture
def cuda_queries(monkeypatch):
    """The fast launch path on (``kimiops.launch.FAST_LAUNCH``) with the raw CUDA queries it makes
    stubbed: the current device is ``cuda_queries.device`` (0) and its current stream
    ``cuda_queries.stream`` (77); change them to simulate a switch. For host-side tests of launch
    bookkeeping on CPU tensors."""
    import types

    import kimiops.launch as fast_launch

    state = types.SimpleNamespace(device=0, stream=77)
    monkeypatch.setattr(fast_launch, "FAST_LAUNCH", True)
    monkeypatch.setattr(torch._C, "_cuda_getDevice", lambda: state.device, raising=False)
    monkeypatch.setattr(torch._C, "_cuda_getCurrentRawStream", lambda dev: state.stream, raising=False)
    return state


@pytest.fixture
def prefill_launches(monkeypatch):
    """The chunked prefill's launches stubbed (``benchmarks/tools/stub_launches.py``, which the host-side
    tools share): each records as ``kimiops.launch.launch`` does and, instead of launching, appends
    ``(gx, gy, gz, stream, kernel name, specialization key, *values)`` (tensors as addresses) to the
    list this returns, so a call that would launch another compiled variant shows in the key;
    programmatic dependent launch on (pipelined parts are chained)."""
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[1] / "benchmarks" / "tools"))
    import stub_launches

    calls = []
    stub_launches.install(calls, monkeypatch.setattr)
    return calls
