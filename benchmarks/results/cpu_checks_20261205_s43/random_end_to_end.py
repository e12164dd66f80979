"""End-to-end error (o, final state) against fp64 on random inputs in the tests' gate regimes (bf16 inputs,
B=1 T=256 H=HV=2 K=V=64, Triton's interpreter, default numerics), for the kimiops on the path:
TRITON_INTERPRET=1 python3 <this> from the tree's root (or through tf32_truncation_end_to_end.py)."""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.getcwd(), "tests", "kda"))
import test_chunk_kernel as t  # noqa: E402

for gate, mild in (("none", True), ("softplus", True), ("softplus", False), ("lower_bound", True)):
    for seed in (0, 1):
        inp = t.make_inputs(1, 256, 2, 2, 64, 64, gate, torch.bfloat16, "cpu", seed=seed, mild=mild)
        ht = torch.empty(1, 2, 64, 64)
        o = t.run(inp, gate=gate, scale=64 ** -0.5, ht=ht)
        ro, rs = t.reference(inp, gate=gate, scale=64 ** -0.5)
        print(f"gate {gate} mild {mild} seed {seed}: o {t.rel_err(o, ro):.2e} state {t.rel_err(ht, rs):.2e}", flush=True)
