"""The kernels a fresh process compiles for first_call_compile.py's extend_walk (32 heads, K = V = 128,
a pool with indices, precomputed g), launches stubbed with PDL on (stub_launches.py): per call its layout
form and the stage-1 PDL modes, then the distinct compiled variants per kernel. Run from a tree's root:
    python3 benchmarks/results/cpu_checks_20261205_s52/scripts/walk_variants.py [tree]
"""
import sys

sys.path.insert(0, (sys.argv[1] if len(sys.argv) > 1 else ".") + "/benchmarks/tools")
sys.path.insert(0, sys.argv[1] if len(sys.argv) > 1 else ".")
import stub_launches  # noqa: E402
import torch  # noqa: E402
from first_call_compile import WALK_CASES  # noqa: E402
from prefill_replay_host_cpu import pool_call  # noqa: E402

from kimiops.kda.kernels import chunk  # noqa: E402

calls, keys = [], {}
stub_launches.install(calls)
pool = torch.zeros(16, 32, 128, 128)
at_pdl = 6 + chunk.chunk_intra_kernel.arg_names.index("PDL")
for lens in WALK_CASES["extend_walk"]:
    x, kw, _ = pool_call(lens, 32, pool)
    kw.update(gate="none", A_log=None)
    calls.clear()
    chunk.chunk_kda_fwd(*x, **kw)
    form = chunk.elastic_layout(sum(lens), len(lens), 32, 128)[0][0]
    print(f"{str(lens):24s} {form:9s} stage-1 PDL {[c[at_pdl] for c in calls if c[4] == 'chunk_intra_kernel']}")
    for c in calls:
        keys.setdefault(c[4], set()).add(c[5])
print(f"{sum(len(k) for k in keys.values())} kernels: " + ", ".join(f"{n} {len(k)}" for n, k in sorted(keys.items())))
