"""Means over the rounds of ``prefill_round_ab.py`` logs (``<run prefix>_round_ab_<tree>_<round>.log``
in one folder), per case, gate mode and tree: 'stage 1 / whole call' in us.

    python3 benchmarks/tools/prefill_round_means.py <logs dir> <run prefix> <tree> [<tree> ...]
"""
import collections
import glob
import re
import sys

d, prefix, trees = sys.argv[1], sys.argv[2], sys.argv[3:]
vals = collections.defaultdict(list)
modes = {}  # gate modes in the order the logs print them
for t in trees:
    for path in sorted(glob.glob(f"{d}/{prefix}_round_ab_{t}_*.log")):
        for line in open(path):
            m = re.match(r"time (\S+) (\w+): stage 1 ([\d.]+) us, state ([\d.]+) us, call ([\d.]+) us", line)
            if m:
                vals[(m[1], m[2], t)].append((float(m[3]), float(m[5])))
                modes.setdefault(m[2])
print("case mode | " + " | ".join(f"{t}: stage 1 / call" for t in trees))
for case in sorted({k[0] for k in vals}):
    for mode in modes:
        if not any(vals[(case, mode, t)] for t in trees):
            continue
        cells = []
        for t in trees:
            v = vals[(case, mode, t)]
            cells.append(f"{sum(x[0] for x in v) / len(v):.1f} / {sum(x[1] for x in v) / len(v):.1f} (n={len(v)})")
        print(f"{case} {mode} | " + " | ".join(cells))
