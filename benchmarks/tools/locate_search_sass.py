"""Stage 1's compiled variants of varlen calls over the sequence count ``N``, and what each costs in
machine code (offline sm_90 compile, no GPU needed, ``sm90_compile.py``).

Each program of ``chunk_intra_kernel`` finds its sequence by a binary search over ``cu_seqlens``. Until
the fifty-first session the search ran a constexpr trip count ``LOG_N`` (``N``'s bit length): one
compiled kernel per bit length of the batch's sequence count; since, it loops while the range holds
more than one sequence. This groups the sequence counts ``SEQS`` by the compile key the launcher gives
them (Triton's specialization of the call's integer arguments as passed, ``chunk_layout.CALL_COUNTS``
unspecialized, plus ``LOG_N`` where the tree's kernel takes it), compiles one kernel per key at
H = HV = 32, K = V = 128 (bf16 inputs, L2 norm in the kernel, precomputed g and the softplus gate) and
prints per key its sequence counts, the SASS instruction count, a hash of the opcode sequence,
registers and spill stores.

    python benchmarks/tools/locate_search_sass.py <tree>     # e.g. . or a git worktree of an earlier commit
"""
import sys

sys.path.insert(0, sys.argv[1] if len(sys.argv) > 1 else ".")
from int_specialization_sass import as_launched, intra_const, intra_options, varlen_intra  # noqa: E402
from sm90_compile import INTRA_POINTERS, compile_sm90, sass_instruction_count, sass_opcode_digest  # noqa: E402

from kimiops.kda.kernels import chunk_intra as ci  # noqa: E402

SEQS = (1, 2, 3, 5, 8, 9, 16, 17, 31, 33, 48, 64, 100, 255, 256, 1000)
TOKENS_PER_SEQ = 300


def main() -> None:
    kernel = ci.chunk_intra_kernel
    takes_log_n = "LOG_N" in kernel.arg_names
    print(f"offline sm_90 (triton 3.6), varlen stage 1, H = HV = 32, K = V = 128, {TOKENS_PER_SEQ} tokens per "
          f"sequence; search trip count {'LOG_N (constexpr)' if takes_log_n else 'a loop on the range'}")
    for gate in (0, 1):
        groups = {}
        for N in SEQS:
            T = TOKENS_PER_SEQ * N
            ones, div = as_launched(varlen_intra(T, N, T // 32 + N), True)
            log_n = max(1, N.bit_length()) if takes_log_n else 0
            groups.setdefault((tuple(sorted(ones)), div, log_n), []).append(N)
        print(f"gate {gate}: {len(groups)} compiled kernels for {len(SEQS)} sequence counts")
        for (ones, div, log_n), seqs in groups.items():
            const = dict(intra_const(True, log_n, 0), GATE=gate, HAS_A=gate != 0, HAS_DT_BIAS=gate != 0,
                         **{n: 1 for n in ones})
            k, regs = compile_sm90(kernel, INTRA_POINTERS, const, intra_options(), divisible=div)
            print(f"  N {','.join(map(str, seqs)):<50} {sass_instruction_count(k.asm['cubin']):6d}  "
                  f"{sass_opcode_digest(k.asm['cubin'])}  {regs}  (1: {list(ones)}, /16: {list(div)}"
                  f"{f', LOG_N {log_n}' if takes_log_n else ''})", flush=True)


if __name__ == "__main__":
    main()
