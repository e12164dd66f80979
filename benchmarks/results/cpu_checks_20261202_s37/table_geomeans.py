"""The prefill table's ten cells (H200, CUDA-graph medians against FLA 0.6 in the same process per cell):
the five with the in-kernel softplus gate from the thirty-seventh session's run 3 (the gate without the
hardware log; logs_h200_20261202d/), the five with precomputed g from the thirty-sixth session's run 3
(c694a39; the precomputed-g path of stage 1 compiles to the same PTX today,
cpu_checks_20261202_s37/intra_compile_stats_*.log). Geomean, lowest cell, cells at 2x or more.
    python3 benchmarks/results/cpu_checks_20261202_s37/table_geomeans.py"""
import json
import math
import os

R = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
rows = lambda f: json.load(open(os.path.join(R, f)))["rows"]  # noqa: E731
g_cells = rows("kda_prefill_20261202_044507.json")
gate_cells = rows("kda_prefill_20261202_062009.json")
cells = g_cells + gate_cells
assert len(cells) == 10 and len({(r["case"], r["mode"]) for r in cells}) == 10
for r in cells:
    print(f"{r['case']:14s} {r['mode']:5s} ours graph {r['ours_graph_ms']:.3f} ms, FLA {r.get('fla_graph_ms') or r.get('fla_eager_ms'):.3f} ms,"
          f" {r['speedup']:.2f}x")
gm = math.exp(sum(math.log(r["speedup"]) for r in cells) / len(cells))
print(f"ten cells: geomean {gm:.3f}, lowest {min(r['speedup'] for r in cells):.3f}, "
      f"at 2x or more {sum(r['speedup'] >= 2 for r in cells)}")
