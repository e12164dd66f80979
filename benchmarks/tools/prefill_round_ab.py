"""Stage 1 and the whole prefill call of one source tree, for A/B runs of trees side by side (one
process per tree, alternated by the caller; the tree is whichever ``kimiops`` comes first on
PYTHONPATH, ``benchmarks/checkout_path.py``). Prints which tree it imported, the accuracy of the
issue's acceptance cases (bf16, T = 4096, H = 4, against the fp64 recurrence, inputs of
``tests/kda/test_chunk_kernel.py``), then CUDA-graph medians of stage 1 alone, the state stage alone
and the whole call (H = HV = 32, K = V = 128, q/k L2 norm; ``--cases``: the issue's cells,
``bench_kda_prefill.TABLE_CASES``, and 64 sequences of 128 tokens; default B1 T8192 and B8 T1024) per
gate mode of ``bench_kda_prefill.py`` (``--modes``): ``g``, ``gk`` (Kimi-like precomputed g), ``gate``,
``lb``. ``prefill_round_means.py`` averages the logs of several rounds.

    PYTHONPATH=<tree>:$PWD/benchmarks python3 benchmarks/tools/prefill_round_ab.py [--no-accuracy] \
        [--cases B1_T8192,B8_T1024,varlen7_16384,varlen64_128] [--modes g,gk,gate,lb]   # repository root
"""
import argparse
import os
import sys

import torch

import kimiops  # noqa: E402  (first: bench_kda_prefill puts the repository root first on sys.path)

sys.path.insert(0, os.path.join(os.getcwd(), "tests", "kda"))
import bench_kda_prefill as bk  # noqa: E402
import test_chunk_kernel as tck  # noqa: E402
from kimiops.testing import rel_err  # noqa: E402

REP = 40
CASES = {name: (B, T, lens) for name, B, T, lens in bk.TABLE_CASES}
CASES["varlen64_128"] = (1, 64 * 128, [128] * 64)  # the deepest search of a slot's sequence
ARGS = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
ARGS.add_argument("--no-accuracy", action="store_true")
ARGS.add_argument("--cases", default="B1_T8192,B8_T1024")
ARGS.add_argument("--modes", default="g,gk,gate,lb")


def main():
    args = ARGS.parse_args()
    print(f"kimiops from {os.path.dirname(kimiops.__file__)}; device {torch.cuda.get_device_name()}")
    families = (("none", True), ("softplus", True), ("softplus", False), ("lower_bound", True))
    for gate, mild in () if args.no_accuracy else families:
        inp = tck._gpu_inputs(gate, mild)
        ht = torch.full((1, 4, 128, 128), float("nan"), device="cuda")
        o = tck.run(inp, gate=gate, scale=128 ** -0.5, ht=ht)
        ro, rs = tck.reference(inp, gate=gate, scale=128 ** -0.5)
        fin = bool(torch.isfinite(o.float()).all() and torch.isfinite(ht).all())
        print(f"accuracy {gate} mild={mild}: rel o {rel_err(o, ro):.3e}, rel state {rel_err(ht, rs):.3e}, finite {fin}")
    for name in args.cases.split(","):
        B, T, lens = CASES[name]
        for mode in args.modes.split(","):
            c, ht, out = bk.warm_case(B, T, mode, lens)
            full = bk.ours_fn(c, ht, out)
            s1 = bk.bench_graph(bk.ours_fn(c, ht, out, stage="intra"), REP)
            st = bk.bench_graph(bk.ours_fn(c, ht, out, stage="state"), REP)
            whole = bk.bench_graph(full, REP)
            print(f"time {name} {mode}: stage 1 {s1 * 1e3:.1f} us, state {st * 1e3:.1f} us, call {whole * 1e3:.1f} us")
            del c, ht, out


if __name__ == "__main__":
    main()
