"""State-stage configs stage by stage, in one part: stage 1 alone, the state stage alone and the
whole call (CUDA-graph medians, precomputed g), for state-config overrides given as ``key=value,..``
rows separated by ';' (``bench_kda_prefill.parse_overrides``). (Written for the pair steps of
branch ``exp/pair-steps``, whose ``pair_steps`` key exists only there: logs_h200_20261130q run 2.)

    PYTHONPATH=$PWD:$PWD/benchmarks python3 benchmarks/tools/state_config_stages.py \
        --configs "num_stages=3;num_stages=4"
"""
import argparse

import torch

from bench_kda_prefill import HV, K, V, _forced_parts, bench_graph, make_case, ours_fn, parse_overrides
from kimiops.kda import workspace

CASES = {"B1_T8192": (1, 8192), "B4_T4096": (4, 4096), "B8_T1024": (8, 1024)}
ONE_PART = _forced_parts(1)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--cases", default="B1_T8192,B4_T4096")
    p.add_argument("--configs", default="num_stages=3;num_stages=4")
    p.add_argument("--rep", type=int, default=20)
    args = p.parse_args()
    for name in args.cases.split(","):
        B, T = CASES[name]
        c = make_case(B, T, "g")
        for row in args.configs.split(";"):
            sc = parse_overrides(row)
            ht = torch.empty(B, HV, K, V, device="cuda")
            out = torch.empty_like(c["v"])
            try:
                whole = ours_fn(c, ht, out, state=sc, pipeline=ONE_PART)
                whole()
                t_all = bench_graph(whole, args.rep)
                t1 = bench_graph(ours_fn(c, ht, out, state=sc, stage="intra", pipeline=ONE_PART), args.rep)
                whole()  # every scratch tile as this config's stage 1 leaves it (the state stage alone reads them)
                t2 = bench_graph(ours_fn(c, ht, out, state=sc, stage="state", pipeline=ONE_PART), args.rep)
                print(f"{name} {row:<40} stage 1 {t1:.3f} ms, state {t2:.3f} ms, whole {t_all:.3f} ms", flush=True)
            except Exception as e:  # a config that does not compile or launch
                print(f"{name} {row:<40} failed: {type(e).__name__}: {str(e)[:160]}", flush=True)
        del c
        workspace.empty_cache()


if __name__ == "__main__":
    main()
