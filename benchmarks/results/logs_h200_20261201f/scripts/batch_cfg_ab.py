"""Batch mode ([N, 1, ...], no cu_seqlens) with named configs of the decode kernel on the kimiops tree
first on sys.path (trees before and after the batch table: run the script once per tree, alternating),
against the cu_seqlens form with its table config; CUDA-graph medians of 20 calls, best of 3 interleaved
rounds, the same pool slots in every call (same) and 20 disjoint slot sets (cold).

    PYTHONPATH=<tree>:$PWD/benchmarks python3 batch_cfg_ab.py <label>
"""
import inspect
import json
import sys

import torch

from kimiops.kda.kernels import recurrent as rec  # first: the tree under test
from kimiops.bench.timing import graph_us

from bench_kda_decode import GRAPH_CALLS, HV, K, V, Case  # noqa: E402

label = sys.argv[1]
has_early = "early_inputs" in inspect.signature(rec.recurrent_kda_fwd_config).parameters
CFGS = {2: ["8x2", "8x4", "8x4e"], 4: ["8x1", "16x2", "16x2e"], 8: ["8x1", "8x1e"], 16: ["8x1h", "8x1he"],
        64: ["8x1h", "8x1he"]}
gen = torch.Generator(device="cuda").manual_seed(0)
slots = GRAPH_CALLS * max(CFGS)
pool = torch.randn(slots, HV, V, K, device="cuda", generator=gen) * 0.1


def parse(text):
    head = text.rstrip("he")
    bv, nw = head.split("x")
    return int(bv), int(nw), "h" in text[len(head):], "e" in text[len(head):]


def batch_fn(case, idx, cfg):
    kw = dict(case.launch_kwargs(idx), cu_seqlens=None, stream_hints=cfg[2])
    if has_early:
        kw["early_inputs"] = cfg[3]
    q, k, v, g, beta = (x.view(case.N, 1, *x.shape[2:]) for x in (case.q, case.k, case.v, case.g, case.beta))
    return lambda: rec.recurrent_kda_fwd_config(cfg[0], cfg[1], q, k, v, g, beta, **kw)


out = {"label": label, "kernel": rec.__file__, "rows": []}
for N, names in CFGS.items():
    case = Case(N, pool, gen)
    fns = {"varlen": [case.ours()] * GRAPH_CALLS, "varlen_cold": [case.ours(idx=i) for i in case.idx_sets]}
    for name in names:
        cfg = parse(name)
        if cfg[3] and not has_early:
            continue
        fns[name] = [batch_fn(case, case.idx, cfg)] * GRAPH_CALLS
        fns[name + "_cold"] = [batch_fn(case, i, cfg) for i in case.idx_sets]
    best = {}
    for _ in range(3):
        for name, f in fns.items():
            us = graph_us(f)
            best[name] = min(best.get(name, us), us)
    out["rows"].append({"N": N, **{k: round(v, 3) for k, v in best.items()}})
    print(f"{label:>5} N={N:>3} " + "  ".join(f"{k} {best[k]:.2f}/{best[k + '_cold']:.2f}"
                                            for k in fns if not k.endswith("_cold")), flush=True)
print(json.dumps(out))
