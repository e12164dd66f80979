"""The longest-first sort (``longest_first_kernel``, 4 warps, as ``chunk.py`` launches it) compiled for
sm_90 offline per block ``BLOCK``: SASS instruction count, registers, and whether declaring ``N``
divisible by 16 (Triton's specialization of such a count) changes the opcodes. No GPU.

    python3 benchmarks/results/cpu_checks_20261205_s51/scripts/sort_block_sass.py [tree]   # repository root
"""
import os
import sys

TREE = sys.argv[1] if len(sys.argv) > 1 else "."
sys.path[:0] = [TREE, os.path.join(TREE, "benchmarks", "tools")]
from sm90_compile import compile_sm90, sass_instruction_count, sass_opcode_digest  # noqa: E402

from kimiops.kda.kernels import chunk_state as cs  # noqa: E402

for block in (2, 4, 8, 16, 32, 64, 128, 256, 512, 1024):
    row = []
    for div in ((), ("N",)):
        k, regs = compile_sm90(cs.longest_first_kernel, {"cu_seqlens": "*i32", "order": "*i32"}, dict(BLOCK=block),
                               dict(num_warps=4, num_stages=1), divisible=div)
        row.append(f"{sass_instruction_count(k.asm['cubin'])} {sass_opcode_digest(k.asm['cubin'])} ({regs})")
    print(f"BLOCK {block:4d}: N plain {row[0]}; N divisible by 16 {row[1]}", flush=True)
