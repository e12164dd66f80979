"""Triton-interpreter support (``TRITON_INTERPRET=1``: Triton kernels on CPU tensors).

Triton 3.6's interpreter turns runtime loop bounds (``range(start, stop)`` with tensor bounds)
into Python ints through numpy arrays, which numpy >= 2.4 refuses ("only 0-dimensional arrays can
be converted to Python scalars"; triton-lang/triton#9171, fixed upstream after 3.6). kimiops
gives interpreted tensors an ``__index__`` when it is imported in interpreter mode, so its kernels
run there as written.
"""

from __future__ import annotations

import os


def interpreter_enabled() -> bool:
    """Whether ``TRITON_INTERPRET=1`` is set now."""
    return os.environ.get("TRITON_INTERPRET", "0") == "1"


#: Whether the interpreter was on when kimiops was imported. Triton decides at decoration time
#: whether a ``@triton.jit`` function is interpreted, so the kernels run on CPU tensors only if
#: this is true, whatever the environment says later.
INTERPRETED_AT_IMPORT = interpreter_enabled()


def patch_interpreter_for_numpy_2_4() -> None:
    """Idempotent; a no-op with numpy < 2.4."""
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
