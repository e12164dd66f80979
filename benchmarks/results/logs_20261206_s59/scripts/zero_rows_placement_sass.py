"""Fifty-ninth session: the state stage's varlen builds with and without ``ZERO_PADDING_ROWS`` in the three
layouts that zero padding rows (pipelined parts of one prompt, 4 stages; one launch, sorted; the segmented
output walk), and the fixed-length parts of the issue's B1 cells, offline sm_90 at H = HV = 32, K = V = 128,
bf16: SASS instructions and a digest of the whole kernel (operands included: equal digests, the same machine
code), the chunk loop's length and opcode digest, registers. Run on each tree of runs 2-3, on main and on
branch exp/parts-tail-hint: main's builds must match .exp/zend's parted build and .exp/zstart's others; only
the branch compiles the flag at fixed length.

    PYTHONPATH=<tree> python3 benchmarks/results/logs_20261206_s59/scripts/zero_rows_placement_sass.py <tree>
"""
import hashlib
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../tools"))
import int_specialization_sass as isp  # noqa: E402  (puts <tree> first on sys.path)
from sm90_compile import (STATE_POINTERS, compile_sm90, longest_loop_opcodes, sass_digest,  # noqa: E402
                          sass_instruction_count, sass_text)

import kimiops  # noqa: E402
from kimiops.kda.kernels import chunk_state as cs  # noqa: E402

print(f"kimiops from {os.path.dirname(kimiops.__file__)}")
LAYOUTS = (("parts", True, True, 0), ("one launch, sorted", True, False, 0), ("segmented output walk", True, False, 2),
           ("parts, fixed length", False, True, 0))
for name, varlen, parted, seg in LAYOUTS:
    for zero in (False, True):
        const = dict(isp.state_const(varlen, parted, seg), ORDERED=varlen and not parted and seg == 0,
                     ZERO_PADDING_ROWS=zero)
        try:
            k, regs = compile_sm90(cs.chunk_state_kernel, STATE_POINTERS, const,
                                   isp.state_options(4 if parted else None))
        except Exception as e:  # noqa: BLE001  (main's static assertion: no flag at fixed length)
            print(f"{name:<22} ZERO_PADDING_ROWS={zero!s:<5} not compiled: {type(e).__name__}", flush=True)
            continue
        cubin = k.asm["cubin"]
        loop = longest_loop_opcodes(sass_text(cubin))
        loop_digest = hashlib.sha1(" ".join(loop).encode()).hexdigest()[:12]
        print(f"{name:<22} ZERO_PADDING_ROWS={zero!s:<5} {sass_instruction_count(cubin):5d} instructions "
              f"({sass_digest(cubin)}); loop {len(loop):4d} ({loop_digest}); {regs}", flush=True)
