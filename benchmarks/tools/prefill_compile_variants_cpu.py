"""How many kernels a fresh serving process compiles for its prefill calls, counted on the CPU (no GPU
needed): the distinct compiled-variant keys (every constexpr, Triton's specialization of every other
argument, the launch options: what Triton compiles a kernel per) of the launches of a random run of
extends through the full path, launches stubbed (``stub_launches.py``).

The run: ``--calls`` varlen extends at H = HV = ``--heads``, K = V = 128, a pool with indices,
precomputed g or the softplus gate (half each), each of 1-``--max-seqs`` requests of 1-``--max-tokens``
tokens. Prints the distinct keys per kernel after the first 10, 100 and all calls. ``--tree`` runs
another source tree (its ``kimiops`` and its ``benchmarks/tools/stub_launches.py``), e.g. a worktree of
an earlier commit, with the same calls (``prefill_replay_host_cpu.pool_call`` builds them).

    python benchmarks/tools/prefill_compile_variants_cpu.py [--calls 1000] [--seed 0] [--tree DIR]
"""
import argparse
import os
import random
import sys

ARGS = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
ARGS.add_argument("--calls", type=int, default=1000)
ARGS.add_argument("--heads", type=int, default=32)
ARGS.add_argument("--max-seqs", type=int, default=8)
ARGS.add_argument("--max-tokens", type=int, default=4096)
ARGS.add_argument("--seed", type=int, default=0)
ARGS.add_argument("--tree", default=os.path.join(os.path.dirname(__file__), "..", ".."))
ARGS = ARGS.parse_args()
sys.path.insert(0, os.path.join(ARGS.tree, "benchmarks", "tools"))
sys.path.insert(0, ARGS.tree)
import stub_launches  # noqa: E402
import torch  # noqa: E402
from prefill_replay_host_cpu import pool_call  # noqa: E402

from kimiops.kda.kernels import chunk  # noqa: E402


def main() -> None:
    rng = random.Random(ARGS.seed)
    calls, keys = [], {}
    stub_launches.install(calls)
    pool = torch.zeros(ARGS.max_seqs, ARGS.heads, 128, 128)
    for i in range(1, ARGS.calls + 1):
        lens = [rng.randint(1, ARGS.max_tokens) for _ in range(rng.randint(1, ARGS.max_seqs))]
        x, kw, _ = pool_call(lens, ARGS.heads, pool)  # the softplus gate
        if rng.random() < 0.5:
            kw.update(gate="none", A_log=None)  # g precomputed
        calls.clear()
        chunk.chunk_kda_fwd(*x, **kw)
        for c in calls:
            keys.setdefault(c[4], set()).add(c[5])
        if i in (10, 100, ARGS.calls):
            per = ", ".join(f"{n} {len(k)}" for n, k in sorted(keys.items()))
            print(f"after {i} calls: {sum(len(k) for k in keys.values())} kernels compiled ({per})", flush=True)


if __name__ == "__main__":
    main()
