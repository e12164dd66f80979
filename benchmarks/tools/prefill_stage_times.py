"""Stage 1 alone and the whole prefill call (CUDA-graph medians) for the cases and gate modes given,
from whichever ``kimiops`` is first on the path, so two trees can be compared run for run:

    PYTHONPATH=<tree>:$PWD/benchmarks python3 benchmarks/tools/prefill_stage_times.py --label base
"""
import argparse

import kimiops  # first: the tree on PYTHONPATH (bench_kda_prefill only adds its checkout when none is)
from bench_kda_prefill import bench_graph, ours_fn, warm_case

CASES = {"B1_T8192": (1, 8192), "B8_T1024": (8, 1024), "B4_T4096": (4, 4096)}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--cases", default="B1_T8192,B8_T1024")
    p.add_argument("--modes", default="g,gate")
    p.add_argument("--rep", type=int, default=20)
    p.add_argument("--label", default="")
    args = p.parse_args()
    print(f"{args.label}: kimiops from {kimiops.__file__}", flush=True)
    for name in args.cases.split(","):
        B, T = CASES[name]
        for mode in args.modes.split(","):
            c, ht, out = warm_case(B, T, mode)
            stage1 = bench_graph(ours_fn(c, ht, out, stage="intra"), args.rep)
            whole = bench_graph(ours_fn(c, ht, out), args.rep)
            print(f"{args.label} {name} {mode}: stage 1 {stage1:.3f} ms, whole call {whole:.3f} ms", flush=True)


if __name__ == "__main__":
    main()
