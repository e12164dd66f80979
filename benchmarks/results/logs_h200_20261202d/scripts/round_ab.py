"""Two trees side by side (run one process per tree, alternating; the tree is whichever ``kimiops``
comes first on PYTHONPATH); ``logs_h200_20261202b/scripts/round_ab.py`` plus the mode "gk":
precomputed g made by the fp32 softplus gate from the "gate" mode's logits (exp(A_log) in [1, 16]:
steps mostly below -5, unlike "g", whose steps stay above -5). Prints which tree it imported, the accuracy of the issue's acceptance cases (bf16,
T = 4096, H = 4, against the fp64 recurrence, inputs of ``tests/kda/test_chunk_kernel.py``), then
CUDA-graph medians of stage 1 alone, the state stage alone and the whole call (H = HV = 32,
K = V = 128, q/k L2 norm) for precomputed g, the softplus gate and the lower-bound gate at -5.

    PYTHONPATH=<tree>:$PWD/benchmarks python3 benchmarks/results/logs_h200_20261202d/scripts/round_ab.py [--no-accuracy]
"""
import os
import sys

import torch

import kimiops  # noqa: E402  (first: bench_kda_prefill puts the repository root first on sys.path)

sys.path.insert(0, os.path.join(os.getcwd(), "tests", "kda"))
import bench_kda_prefill as bk  # noqa: E402
import test_chunk_kernel as tck  # noqa: E402
from kimiops.kda.gate import kda_gate  # noqa: E402
from kimiops.testing import rel_err  # noqa: E402

REP = 40
CASES = [("B1_T8192", 1, 8192), ("B8_T1024", 8, 1024)]


def main():
    print(f"kimiops from {os.path.dirname(kimiops.__file__)}; device {torch.cuda.get_device_name()}")
    families = (("none", True), ("softplus", True), ("softplus", False), ("lower_bound", True))
    for gate, mild in () if "--no-accuracy" in sys.argv else families:
        inp = tck._gpu_inputs(gate, mild)
        ht = torch.full((1, 4, 128, 128), float("nan"), device="cuda")
        o = tck.run(inp, gate=gate, scale=128 ** -0.5, ht=ht)
        ro, rs = tck.reference(inp, gate=gate, scale=128 ** -0.5)
        fin = bool(torch.isfinite(o.float()).all() and torch.isfinite(ht).all())
        print(f"accuracy {gate} mild={mild}: rel o {rel_err(o, ro):.3e}, rel state {rel_err(ht, rs):.3e}, finite {fin}")
    for name, B, T in CASES:
        for mode in ("g", "gk", "gate", "lb"):
            c = bk.make_case(B, T, "gate" if mode == "gk" else mode)
            if mode == "gk":
                c.update(g=kda_gate(c["g"], c["A_log"], c["dt_bias"]).to(c["g"].dtype), A_log=None, dt_bias=None,
                         mode="g")
            ht = torch.empty(B, bk.HV, bk.K, bk.V, device="cuda")
            out = torch.empty_like(c["v"])
            full = bk.ours_fn(c, ht, out)
            full()
            s1 = bk.bench_graph(bk.ours_fn(c, ht, out, stage="intra"), REP)
            st = bk.bench_graph(bk.ours_fn(c, ht, out, stage="state"), REP)
            whole = bk.bench_graph(full, REP)
            print(f"time {name} {mode}: stage 1 {s1 * 1e3:.1f} us, state {st * 1e3:.1f} us, call {whole * 1e3:.1f} us")
            del c, ht, out


if __name__ == "__main__":
    main()
