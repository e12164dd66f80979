"""Offline sm_90 SASS of fp32 exp and division as Triton emits them (no GPU needed): instructions
per element of ``tl.exp`` against ``tl.exp2(x * log2 e)`` and libdevice's ``fast_expf``, and of ``/``
against libdevice's ``fast_dividef`` and ``div_rn``; a 128-element, one-warp kernel (4 elements
per thread), counting the arithmetic instructions (loads, stores, moves and address math left out).

    python benchmarks/tools/math_sass.py
"""
import os
import subprocess
import tempfile

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
from triton.language.extra import libdevice

SKIP = ("NOP", "BRA", "EXIT", "S2R", "LDC", "ULDC", "IMAD.WIDE", "LDG", "STG", "SHF", "LOP", "MOV", "CS2R", "IADD")
MODES = ["tl.exp(x)", "libdevice.fast_expf(x)", "tl.exp2(x * log2e)", "x / (x + 1)",
         "libdevice.fast_dividef(x, x + 1)", "tl.math.div_rn(x, x + 1)"]


@triton.jit
def _kernel(x, y, MODE: tl.constexpr):
    o = tl.arange(0, 128)
    v = tl.load(x + o)
    if MODE == 0:
        r = tl.exp(v)
    elif MODE == 1:
        r = libdevice.fast_expf(v)
    elif MODE == 2:
        r = tl.exp2(v * 1.4426950408889634)
    elif MODE == 3:
        r = v / (v + 1.0)
    elif MODE == 4:
        r = libdevice.fast_dividef(v, v + 1.0)
    else:
        r = tl.math.div_rn(v, v + 1.0)
    tl.store(y + o, r)


def main() -> None:
    nvdisasm = os.path.join(os.path.dirname(triton.__file__), "backends/nvidia/bin/nvdisasm")
    for mode, name in enumerate(MODES):
        k = triton.compile(ASTSource(_kernel, {"x": "*fp32", "y": "*fp32", "MODE": "constexpr"}, {"MODE": mode}),
                           target=GPUTarget("cuda", 90, 32), options=dict(num_warps=1))
        with tempfile.NamedTemporaryFile(suffix=".cubin", delete=False) as f:
            f.write(k.asm["cubin"])
        sass = subprocess.run([nvdisasm, "-c", f.name], capture_output=True, text=True).stdout
        os.unlink(f.name)
        ops = [line.split(";")[0].split("*/")[-1].strip() for line in sass.splitlines() if "/*0" in line]
        ops = [op for op in ops if op and not op.startswith(SKIP)]
        ptx = sorted({line.split()[0] for line in k.asm["ptx"].splitlines() if "ex2" in line or "div." in line})
        print(f"{name:34s} {len(ops) / 4:5.1f} instructions per element   PTX {ptx}")


if __name__ == "__main__":
    main()
