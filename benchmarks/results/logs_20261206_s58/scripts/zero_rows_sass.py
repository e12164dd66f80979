"""Fifty-eighth session: the state stage's varlen builds (one launch, sorted; the segmented output walk) with
and without ``ZERO_PADDING_ROWS``, offline sm_90 at H = HV = 32, K = V = 128, bf16: SASS instructions of the
whole kernel and of its chunk loop (the longest loop), registers and spills, the loop's opcode digest.

    PYTHONPATH=$PWD python3 benchmarks/results/logs_20261206_s58/scripts/zero_rows_sass.py
"""
import hashlib
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../tools"))
import int_specialization_sass as isp  # noqa: E402
from sm90_compile import STATE_POINTERS, _sass_lines, compile_sm90, sass_text  # noqa: E402

from kimiops.kda.kernels import chunk_state as cs  # noqa: E402


def loop_body(lines):
    """Opcodes of the longest loop: from a label to the last branch back to it (the chunk loop)."""
    labels = {m.group(1): i for i, x in enumerate(lines) if (m := re.match(r"^(\.L_x_\d+):", x.strip()))}
    best = []
    for i, line in enumerate(lines):
        m = re.search(r"BRA\s+`\((\.L_x_\d+)\)", line)
        if m and labels.get(m.group(1), i) < i:
            body = [op.group(1) for x in lines[labels[m.group(1)]:i + 1]
                    if (op := re.search(r"/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)", x))]
            best = max(best, body, key=len)
    return best


for name, seg in (("varlen, one launch, sorted", 0), ("varlen, segmented output walk", 2)):
    for zero in (False, True):
        const = dict(isp.state_const(True, False, seg), ORDERED=seg == 0, ZERO_PADDING_ROWS=zero)
        k, regs = compile_sm90(cs.chunk_state_kernel, STATE_POINTERS, const, isp.state_options())
        lines = _sass_lines(k.asm["cubin"])
        body = loop_body(sass_text(k.asm["cubin"]))
        digest = hashlib.sha1(" ".join(body).encode()).hexdigest()[:12]
        print(f"{name:<32} ZERO_PADDING_ROWS={zero!s:<5} {len(lines):5d} instructions; loop {len(body):4d} "
              f"({digest}); {regs}", flush=True)
