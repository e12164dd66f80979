"""The prefill table's ten cells (H200, CUDA-graph medians against FLA 0.6 in the same process per cell):
the five with precomputed g and varlen with the in-kernel gate from this session's run 3 (c694a39's stage 1,
exponentials as ex2.approx.ftz), the other four in-kernel gate cells from the thirty-fifth session's run 4
(22a3db4; ftz changed the softplus gate's stage 1 by under 1% and its call by under 0.2%,
logs_h200_20261202c/r1_means.log). Geomean, lowest cell, cells at 2x or more.
    python3 benchmarks/results/cpu_checks_20261202_s36/table_geomeans.py"""
import json
import math
import os

R = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
rows = lambda f: json.load(open(os.path.join(R, f)))["rows"]  # noqa: E731
g_cells = rows("kda_prefill_20261202_044507.json")
varlen_gate = rows("kda_prefill_20261202_044901.json")
gate_before = [r for r in rows("kda_prefill_20261202_021358.json") if r["mode"] == "gate"]
cells = g_cells + varlen_gate + gate_before
assert len(cells) == 10 and len({(r["case"], r["mode"]) for r in cells}) == 10
for r in cells:
    print(f"{r['case']:14s} {r['mode']:5s} ours graph {r['ours_graph_ms']:.3f} ms, FLA {r.get('fla_graph_ms') or r.get('fla_eager_ms'):.3f} ms,"
          f" {r['speedup']:.2f}x")
gm = math.exp(sum(math.log(r["speedup"]) for r in cells) / len(cells))
print(f"ten cells: geomean {gm:.3f}, lowest {min(r['speedup'] for r in cells):.3f}, "
      f"at 2x or more {sum(r['speedup'] >= 2 for r in cells)}")
