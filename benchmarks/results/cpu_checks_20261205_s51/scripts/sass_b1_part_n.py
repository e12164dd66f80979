"""Stage 1 of a fixed-length call of one sequence (B1 T8192, a later pipelined part, precomputed g, as
``int_specialization_sass.py`` compiles it) with ``N`` the constant 1 (Triton's specialization before the
fifty-first session) and ``N`` a runtime argument (since): SASS instruction count, registers and spill
stores, the loops (backward branches) with their length and where the local-memory spill traffic sits,
and the opcode counts that differ inside the loops and in all. Offline sm_90, no GPU.

    python3 benchmarks/results/cpu_checks_20261205_s51/scripts/sass_b1_part_n.py [tree]   # repository root
"""
import collections
import os
import re
import subprocess
import sys
import tempfile

TREE = sys.argv[1] if len(sys.argv) > 1 else "."
sys.path[:0] = [TREE, os.path.join(TREE, "benchmarks", "tools")]
import triton  # noqa: E402
from int_specialization_sass import intra_const, intra_options  # noqa: E402
from sm90_compile import INTRA_POINTERS, compile_sm90  # noqa: E402

from kimiops.kda.kernels import chunk_intra as ci  # noqa: E402


def sass_with_labels(cubin: bytes) -> tuple[list[str], dict]:
    """Instruction lines (offsets stripped) and ``{label: index of the instruction it marks}``."""
    nvdisasm = os.path.join(os.path.dirname(triton.__file__), "backends/nvidia/bin/nvdisasm")
    with tempfile.NamedTemporaryFile(suffix=".cubin", delete=False) as f:
        f.write(cubin)
    text = subprocess.run([nvdisasm, "-c", f.name], capture_output=True, text=True).stdout
    os.unlink(f.name)
    ops, labels = [], {}
    for line in text.splitlines():
        m = re.match(r"\s*\.(L_x_\d+):", line)
        if m:
            labels[m[1]] = len(ops)
        elif re.search(r"/\*[0-9a-f]{4,}\*/", line):
            ops.append(re.sub(r"/\*[0-9a-f]+\*/", "", line).split(";")[0].strip())
    return ops, labels


def opcode(line: str) -> str:
    return next((t for t in line.split() if not t.startswith("@")), "")


counts = {}
for name, extra in (("N = 1 (constant)", dict(N=1)), ("N runtime", {})):
    k, regs = compile_sm90(ci.chunk_intra_kernel, INTRA_POINTERS, dict(intra_const(False, 1, 2), **extra),
                           intra_options(), divisible=("T",))
    ops, labels = sass_with_labels(k.asm["cubin"])
    loops = [(labels[m[1]], i) for i, op in enumerate(ops) if (m := re.search(r"BRA `\(\.(L_x_\d+)\)", op))
             and labels[m[1]] < i]  # backward branches (a branch to itself ends the kernel)
    spills = [i for i, op in enumerate(ops) if opcode(op).startswith(("STL", "LDL"))]
    in_loops = [i for i in spills if any(a <= i <= b for a, b in loops)]
    print(f"{name}: {len(ops)} instructions, {regs}; loops {[(a, b, b - a + 1) for a, b in loops]} "
          f"(first, last, length); local-memory instructions {len(spills)}, inside loops {len(in_loops)}")
    loop_ops = [opcode(ops[i]) for a, b in loops for i in range(a, b + 1)]
    counts[name] = (collections.Counter(map(opcode, ops)), collections.Counter(loop_ops))
(a, la), (b, lb) = counts.values()
diff = lambda x, y: {op: y[op] - x[op] for op in sorted(set(x) | set(y)) if x[op] != y[op]}  # noqa: E731
print("opcode counts inside the loops, runtime N minus constant:", diff(la, lb))
print("opcode counts in all, runtime N minus constant:", diff(a, b))
