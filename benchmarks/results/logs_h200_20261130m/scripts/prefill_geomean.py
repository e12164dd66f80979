"""Prefill geomean over the ten acceptance cells from result JSONs of bench_kda_prefill.py: each
(case, mode) row is taken from the last file that has it.

    python benchmarks/results/logs_h200_20261130m/scripts/prefill_geomean.py FILE.json ...
"""
import json
import math
import sys

cells = {}
for path in sys.argv[1:]:
    for r in json.load(open(path))["rows"]:
        if r.get("speedup"):
            cells[(r["case"], r["mode"])] = (r["speedup"], path.rsplit("/", 1)[-1])
for (case, mode), (s, src) in sorted(cells.items()):
    print(f"{case:<14} {mode:<5} {s:.2f}x  ({src})")
v = [s for s, _ in cells.values()]
print(f"{len(v)} cells: geomean {math.exp(sum(map(math.log, v)) / len(v)):.3f}x, lowest {min(v):.2f}x")
