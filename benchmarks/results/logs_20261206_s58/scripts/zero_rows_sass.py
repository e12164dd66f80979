"""Fifty-eighth session: the state stage's varlen builds (one launch, sorted; the segmented output walk) with
and without ``ZERO_PADDING_ROWS``, offline sm_90 at H = HV = 32, K = V = 128, bf16: SASS instructions of the
whole kernel and of its chunk loop (the longest loop), registers and spills, the loop's opcode digest.

    PYTHONPATH=$PWD python3 benchmarks/results/logs_20261206_s58/scripts/zero_rows_sass.py
"""
import hashlib
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../tools"))
import int_specialization_sass as isp  # noqa: E402
from sm90_compile import STATE_POINTERS, _sass_lines, compile_sm90, longest_loop_opcodes, sass_text  # noqa: E402

from kimiops.kda.kernels import chunk_state as cs  # noqa: E402


for name, seg in (("varlen, one launch, sorted", 0), ("varlen, segmented output walk", 2)):
    for zero in (False, True):
        const = dict(isp.state_const(True, False, seg), ORDERED=seg == 0, ZERO_PADDING_ROWS=zero)
        k, regs = compile_sm90(cs.chunk_state_kernel, STATE_POINTERS, const, isp.state_options())
        lines = _sass_lines(k.asm["cubin"])
        body = longest_loop_opcodes(sass_text(k.asm["cubin"]))
        digest = hashlib.sha1(" ".join(body).encode()).hexdigest()[:12]
        print(f"{name:<32} ZERO_PADDING_ROWS={zero!s:<5} {len(lines):5d} instructions; loop {len(body):4d} "
              f"({digest}); {regs}", flush=True)
