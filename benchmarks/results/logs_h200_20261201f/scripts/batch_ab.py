"""Decode in batch mode ([N, 1, ...], no cu_seqlens: KDABackend.decode, SGLang's packed_decode) against
the cu_seqlens form of the same step, CUDA-graph medians of 20 calls, best of 3 interleaved rounds, with
the same pool slots in every call (fixed) and with 20 disjoint slot sets (rot, cold L2). Checks that
both forms give the same bits. The kimiops tree comes first on sys.path (variants of the kernel).

    PYTHONPATH=<tree>:$PWD/benchmarks python3 batch_ab.py <label>
"""
import json
import sys

import torch

from kimiops.kda.kernels import recurrent as rec  # first: the variant's tree (bench_kda_decode puts the repo first)
from kimiops.bench.timing import graph_us

from bench_kda_decode import GRAPH_CALLS, HV, K, V, Case  # noqa: E402

label = sys.argv[1]
gen = torch.Generator(device="cuda").manual_seed(0)
NS = (1, 2, 4, 8, 16, 64)
slots = GRAPH_CALLS * max(NS)
pool = torch.randn(slots, HV, V, K, device="cuda", generator=gen) * 0.1


def batch_fn(case, idx):
    kw = dict(case.launch_kwargs(idx), cu_seqlens=None)
    q, k, v, g, beta = (x.view(case.N, 1, *x.shape[2:]) for x in (case.q, case.k, case.v, case.g, case.beta))
    return lambda: rec.recurrent_kda_fwd(q, k, v, g, beta, **kw)


out = {"label": label, "kernel": rec.__file__, "rows": []}
for N in NS:
    case = Case(N, pool, gen)
    p1 = pool[case.idx.long()].clone()
    o_var = case.ours()()
    s_var = pool[case.idx.long()].clone()
    pool[case.idx.long()] = p1
    o_bat = batch_fn(case, case.idx)()
    s_bat = pool[case.idx.long()].clone()
    bits = bool(torch.equal(o_var.view(-1), o_bat.view(-1)) and torch.equal(s_var, s_bat))
    fns = {"varlen": [case.ours()] * GRAPH_CALLS, "batch": [batch_fn(case, case.idx)] * GRAPH_CALLS,
           "varlen_rot": [case.ours(idx=i) for i in case.idx_sets],
           "batch_rot": [batch_fn(case, i) for i in case.idx_sets]}
    best = {}
    for _ in range(3):
        for name, f in fns.items():
            us = graph_us(f)
            best[name] = min(best.get(name, us), us)
    row = {"N": N, "bits_equal": bits, **{k: round(v, 3) for k, v in best.items()}}
    out["rows"].append(row)
    print(f"{label:>6} N={N:>3} varlen {best['varlen']:7.2f} batch {best['batch']:7.2f} | rot: varlen "
          f"{best['varlen_rot']:7.2f} batch {best['batch_rot']:7.2f} | bits {bits}", flush=True)
print(json.dumps(out))
