"""Test setup: without CUDA, Triton kernels run in Triton's interpreter.

``TRITON_INTERPRET=1`` must be set before triton (and kimiops) are imported, since kernels are
wrapped at decoration time; tests marked ``gpu`` are skipped when no CUDA device is present.
"""

import os

import torch

if not torch.cuda.is_available():
    os.environ["TRITON_INTERPRET"] = "1"


import pytest  # noqa: E402

HAS_CUDA = torch.cuda.is_available()


def pytest_collection_modifyitems(config, items):
    if HAS_CUDA:
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def device():
    """Device of the kernel tests: CUDA when present, else CPU (Triton interpreter)."""
    return torch.device("cuda" if HAS_CUDA else "cpu")
