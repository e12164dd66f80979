"""Geomeans of the prefill table: the thirty-fifth session's nine cells (run 4, incomplete), the same nine cells
of the thirty-fourth session's table, and ten cells with the missing one at its last measured value.
    python3 benchmarks/results/cpu_checks_20261202_s35/table_geomeans.py"""
import json
import math
import os

R = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
new = json.load(open(os.path.join(R, "kda_prefill_20261202_021358.json")))["rows"]
old = json.load(open(os.path.join(R, "kda_prefill_20261202_004504.json")))["rows"]
gm = lambda xs: math.exp(sum(map(math.log, xs)) / len(xs))  # noqa: E731
key = lambda r: (r["case"], r["mode"])  # noqa: E731
have = {key(r) for r in new}
old_same = [r["speedup"] for r in old if key(r) in have]
missing = [r for r in old if key(r) not in have]
print(f"this session, {len(new)} cells: geomean {gm([r['speedup'] for r in new]):.3f}, "
      f"lowest {min(r['speedup'] for r in new):.3f}")
print(f"thirty-fourth session, the same {len(old_same)} cells: geomean {gm(old_same):.3f}")
for r in missing:
    print(f"missing: {r['case']} {r['mode']}, last measured {r['speedup']:.3f}")
ten = [r["speedup"] for r in new] + [r["speedup"] for r in missing]
print(f"ten cells with the missing one at its last value: geomean {gm(ten):.3f}; "
      f"cells at 2x or more: {sum(s >= 2 for s in [r['speedup'] for r in new])} of this run's {len(new)}")
