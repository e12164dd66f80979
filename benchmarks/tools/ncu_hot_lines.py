"""Sum Nsight Compute's per-instruction source page into per-source-line hot spots.

    ncu --import REPORT.ncu-rep --page source --csv --print-source cuda,sass > SOURCE.csv
    python benchmarks/tools/ncu_hot_lines.py SOURCE.csv [--top 25]

Prints, per source line (file:line), its share of the warp-stall samples and of the instructions
executed, most-stalled first.
"""

from __future__ import annotations

import argparse
import collections
import csv


def hot_lines(path: str, top: int) -> None:
    agg = collections.defaultdict(lambda: [0, 0, ""])
    total_stalls = total_inst = 0
    current_file, header = None, None
    with open(path, newline="") as f:
        for row in csv.reader(f):
            if not row:
                continue
            if row[0] == "File Path":
                current_file = row[1].split("/")[-1]
                continue
            if row[0] == "Line No":
                header = row
                continue
            if header is None:
                continue
            fields = dict(zip(header, row))
            try:
                line = int(row[0])
                stalls = int(fields.get("Warp Stall Sampling (All Samples)", "0") or 0)
                inst = int(fields.get("Instructions Executed", "0") or 0)
            except ValueError:
                continue
            entry = agg[(current_file, line)]
            entry[0] += stalls
            entry[1] += inst
            entry[2] = row[1].strip()[:100]
            total_stalls += stalls
            total_inst += inst
    print(f"# {path.split('/')[-1]}: stall samples {total_stalls}, instructions executed {total_inst}")
    for (name, line), (stalls, inst, text) in sorted(agg.items(), key=lambda kv: -kv[1][0])[:top]:
        print(f"{name:>16}:{line:<5} stall {100 * stalls / max(total_stalls, 1):5.1f}%  "
              f"inst {100 * inst / max(total_inst, 1):5.1f}%  {text}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("csv", nargs="+", help="ncu --page source --csv exports")
    ap.add_argument("--top", type=int, default=25)
    args = ap.parse_args()
    for path in args.csv:
        hot_lines(path, args.top)
        print()


if __name__ == "__main__":
    main()
