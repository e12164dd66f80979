"""Test setup: without CUDA, Triton kernels run in Triton's interpreter.

``TRITON_INTERPRET=1`` must be set before triton (and kimiops) are imported, since kernels are
wrapped at decoration time; tests marked ``gpu`` are skipped when no CUDA device is present.
"""

import os

import torch

if not torch.cuda.is_available():
    os.environ["TRITON_INTERPRET"] = "1"


def _patch_interpreter_for_numpy_2_4():
    """Triton 3.6's interpreter turns runtime loop bounds into Python ints through numpy arrays,
    which numpy >= 2.4 refuses ("only 0-dimensional arrays can be converted to Python scalars",
    triton-lang/triton#9171, fixed upstream after 3.6): give interpreted tensors an ``__index__``."""
    import numpy as np
    from triton.runtime import interpreter

    if np.lib.NumpyVersion(np.__version__) < "2.4.0" or getattr(interpreter, "_kimiops_patched", False):
        return
    original = interpreter._patch_lang_tensor

    def patched(tensor, scope):
        original(tensor, scope)
        scope.set_attr(tensor, "__index__", lambda self: int(self.handle.data.reshape(-1)[0]))

    interpreter._patch_lang_tensor = patched
    interpreter._kimiops_patched = True


if os.environ.get("TRITON_INTERPRET") == "1":
    _patch_interpreter_for_numpy_2_4()

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
