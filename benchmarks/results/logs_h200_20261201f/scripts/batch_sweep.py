"""Batch-mode decode ([N, 1, ...], no cu_seqlens) over every config candidate of the decode kernel,
CUDA-graph medians of 20 calls, fixed slots and 20 disjoint slot sets (rot), best of 2 interleaved
rounds; the cu_seqlens form with the table config alongside. The kimiops tree comes first on sys.path.

    PYTHONPATH=<tree>:$PWD/benchmarks python3 batch_sweep.py <label>
"""
import json
import sys

import torch

from kimiops.kda.kernels import recurrent as rec  # first: the variant's tree
from kimiops.bench.timing import graph_us

from bench_kda_decode import GRAPH_CALLS, HV, K, V, Case  # noqa: E402

label = sys.argv[1]
gen = torch.Generator(device="cuda").manual_seed(0)
NS = (1, 2, 4, 8, 16)
slots = GRAPH_CALLS * max(NS)
pool = torch.randn(slots, HV, V, K, device="cuda", generator=gen) * 0.1


def batch_fn(case, idx, cfg):
    kw = dict(case.launch_kwargs(idx), cu_seqlens=None)
    q, k, v, g, beta = (x.view(case.N, 1, *x.shape[2:]) for x in (case.q, case.k, case.v, case.g, case.beta))
    return lambda: rec.recurrent_kda_fwd_config(cfg[0], cfg[1], q, k, v, g, beta, **kw)


out = {"label": label, "kernel": rec.__file__, "rows": []}
for N in NS:
    case = Case(N, pool, gen)
    fns = {"varlen_table": [case.ours()] * GRAPH_CALLS, "varlen_table_rot": [case.ours(idx=i) for i in case.idx_sets]}
    for cfg in rec.CONFIG_CANDIDATES:
        fns[f"batch_{cfg[0]}x{cfg[1]}"] = [batch_fn(case, case.idx, cfg)] * GRAPH_CALLS
        fns[f"batch_{cfg[0]}x{cfg[1]}_rot"] = [batch_fn(case, i, cfg) for i in case.idx_sets]
    best = {}
    for _ in range(2):
        for name, f in fns.items():
            us = graph_us(f)
            best[name] = min(best.get(name, us), us)
    row = {"N": N, "table": list(rec.config_for(N * HV, True)), **{k: round(v, 3) for k, v in best.items()}}
    out["rows"].append(row)
    fixed = sorted((v, k) for k, v in best.items() if k.startswith("batch") and not k.endswith("rot"))[:4]
    rot = sorted((v, k) for k, v in best.items() if k.startswith("batch") and k.endswith("rot"))[:4]
    print(f"{label:>5} N={N:>3} table {row['table']} varlen {best['varlen_table']:.2f} / rot {best['varlen_table_rot']:.2f}"
          f" | batch best fixed {[(k[6:], round(v, 2)) for v, k in fixed]} | rot {[(k[6:-4], round(v, 2)) for v, k in rot]}",
          flush=True)
print(json.dumps(out))
