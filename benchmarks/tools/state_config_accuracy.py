"""Accuracy of state-stage configs at issue 3's acceptance shape (bf16, T = 4096, H = HV = 4,
K = V = 128, against the fp64 recurrence) for the four gate families of the GPU tests, with
state-config overrides given as ``key=value,..`` rows separated by ';'
(``bench_kda_prefill.parse_overrides``).

    PYTHONPATH=$PWD python3 benchmarks/tools/state_config_accuracy.py --configs "split_kv=1;split_kv=0"
"""
import argparse
import os
import sys

import torch

HERE = os.path.dirname(__file__)
sys.path[:0] = [os.path.join(HERE, "..", "..", "tests", "kda"), os.path.join(HERE, "..")]
from bench_kda_prefill import parse_overrides  # noqa: E402
from test_chunk_kernel import _gpu_inputs, _parts, reference, run  # noqa: E402

from kimiops.testing import rel_err  # noqa: E402

GATES = [("none", True), ("softplus", True), ("softplus", False), ("lower_bound", True)]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--configs", default="split_kv=1;split_kv=0")
    p.add_argument("--T", type=int, default=4096)
    args = p.parse_args()
    rows = [parse_overrides(r) for r in args.configs.split(";")]
    for gate, mild in GATES:
        inp = _gpu_inputs(gate, mild, T=args.T)
        ro, rs = reference(inp, gate=gate, scale=128**-0.5)
        for sc in rows:
            for parts in (None, _parts(1)):  # the launcher's parts (4 pairs: B1), one part
                ht = torch.full((1, 4, 128, 128), float("nan"), device="cuda")
                o = run(inp, gate=gate, scale=128**-0.5, ht=ht, state_config=sc, pipeline_config=parts)
                print(f"{gate} mild={mild} T={args.T} {sc} {'one part' if parts else 'parts'}: "
                      f"rel o {rel_err(o, ro):.3e}, rel state {rel_err(ht, rs):.3e}", flush=True)


if __name__ == "__main__":
    main()
