"""Relative error of the kernels' gate (``kimiops.kda.gate.kda_gate_tl``, as compiled for the GPU:
fast hardware log and exp) against the fp64 torch gate, per range of the logit x, for the
softplus gate (A = 7.5) and the lower-bound gate at -5 (A = 1). The tree is whichever ``kimiops``
comes first on PYTHONPATH.

    PYTHONPATH=<tree> python3 benchmarks/results/logs_h200_20261202d/scripts/gate_probe.py
"""
import math
import os

import torch
import triton
import triton.language as tl

import kimiops
from kimiops.kda.gate import kda_gate, kda_gate_tl

N = 1 << 20
RANGES = [(-60, -20), (-20, -10), (-10, -3), (-3, 0), (0, 3), (3, 20), (20, 60)]


@triton.jit
def _gate(x, out, A, lower_bound, USE_LOWER_BOUND: tl.constexpr, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out + i, kda_gate_tl(tl.load(x + i), A, lower_bound, True, USE_LOWER_BOUND))


def main():
    print(f"kimiops from {os.path.dirname(kimiops.__file__)}")
    x = torch.linspace(-60, 60, N, dtype=torch.float64).to(torch.float32)
    for name, A, lb in (("softplus A=7.5", 7.5, None), ("lower bound -5", 1.0, -5.0)):
        out = torch.empty(N, device="cuda")
        _gate[(N // 1024,)](x.cuda(), out, A, lb or 0.0, USE_LOWER_BOUND=lb is not None, BLOCK=1024)
        ref = kda_gate(x.double().reshape(1, 1, -1), torch.tensor([math.log(A)], dtype=torch.float64), None,
                       lower_bound=lb, output_dtype=torch.float64).reshape(-1)
        got = out.cpu().double()
        rel = (got - ref).abs() / ref.abs().clamp_min(1e-300)
        cells = []
        for lo, hi in RANGES:
            m = (x >= lo) & (x < hi)
            cells.append(f"[{lo},{hi}) {rel[m].max().item():.2e}")
        print(f"{name}: max rel err by x range: " + ", ".join(cells) + f"; finite {bool(torch.isfinite(got).all())}")


if __name__ == "__main__":
    main()
