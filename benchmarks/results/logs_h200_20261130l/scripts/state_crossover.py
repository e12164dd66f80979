"""Narrow (default below 128 pairs), wide and state candidate 5 state tiles on single-part B1 prompts
of 1024-4064 tokens: whole-call CUDA-graph medians (us), in-kernel gate, H=HV=32, K=V=128."""
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path.cwd() / "benchmarks"))
import bench_kda_prefill as bench  # noqa: E402

from kimiops.kda.kernels.chunk_state import STATE_CANDIDATES, STATE_CONFIG_WIDE  # noqa: E402
try:
    from kimiops.kda.kernels.chunk_state import STATE_CONFIG_NARROW
except ImportError:
    STATE_CONFIG_NARROW = None

rows = {"default": None, "wide": dict(STATE_CONFIG_WIDE), "state 5": STATE_CANDIDATES[5]}
if STATE_CONFIG_NARROW is not None:
    rows = {"default": None, "narrow": dict(STATE_CONFIG_NARROW)}
for T in [int(t) for t in (sys.argv[1:] or (1024, 2048, 3072, 4064))]:
    c = bench.make_case(1, T, "gate")
    ht = torch.empty(1, bench.HV, bench.K, bench.V, device="cuda")
    out = torch.empty_like(c["v"])
    res = []
    for rnd in range(2):
        for label, st in rows.items():
            fn = bench.ours_fn(c, ht, out, state=st)
            fn()
            torch.cuda.synchronize()
            res.append((rnd, label, bench.bench_graph(fn, 20) * 1e3))
    print(f"B1 T{T}: " + ", ".join(f"{label} {us:.1f}" for rnd, label, us in res), flush=True)
