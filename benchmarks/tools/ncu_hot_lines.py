"""Sum Nsight Compute's per-instruction source page into per-source-line hot spots.

    ncu --import REPORT.ncu-rep --page source --csv --print-source cuda,sass > SOURCE.csv
    python benchmarks/tools/ncu_hot_lines.py SOURCE.csv [--top 25] [--extra "L1 Wavefronts Shared Excessive"]

Prints, per source line (file:line), its share of the warp-stall samples and of the instructions
executed, most-stalled first. ``--extra`` adds the share of further columns of the page (matched
by substring; e.g. the shared-memory bank-conflict wavefronts), and ``--sort-extra`` orders the
lines by the first of them. A column the export lacks is reported with the columns it has.
"""

from __future__ import annotations

import argparse
import collections
import csv

STALLS = "Warp Stall Sampling (All Samples)"
INSTRUCTIONS = "Instructions Executed"


def _number(text: str) -> float:
    try:
        return float((text or "0").replace(",", ""))
    except ValueError:
        return 0.0


def hot_lines(path: str, top: int, extra: list[str], sort_extra: bool) -> None:
    wanted = [STALLS, INSTRUCTIONS] + extra
    agg = collections.defaultdict(lambda: [[0.0] * len(wanted), ""])
    totals = [0.0] * len(wanted)
    columns: list[str | None] = [None] * len(wanted)
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
                columns = [next((h for h in header if w == h), None) or next((h for h in header if w in h), None)
                           for w in wanted]
                continue
            if header is None or not row[0].strip().isdigit():
                continue
            fields = dict(zip(header, row))
            entry = agg[(current_file, int(row[0]))]
            for i, col in enumerate(columns):
                if col is not None:
                    value = _number(fields.get(col, "0"))
                    entry[0][i] += value
                    totals[i] += value
            entry[1] = row[1].strip()[:100]
    missing = [w for w, c in zip(wanted, columns) if c is None]
    if missing and header is not None:
        print(f"# columns not in the export: {missing}; it has: {header[2:]}")
    names = ["stall", "inst"] + [w.split()[-1].lower()[:10] for w in extra]
    print(f"# {path.split('/')[-1]}: " + ", ".join(f"{w} {t:.0f}" for w, t in zip(wanted, totals)))
    key = 2 if sort_extra and extra else 0
    for (name, line), (vals, text) in sorted(agg.items(), key=lambda kv: -kv[1][0][key])[:top]:
        shares = "  ".join(f"{n} {100 * v / max(t, 1):5.1f}%" for n, v, t in zip(names, vals, totals))
        print(f"{name:>16}:{line:<5} {shares}  {text}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("csv", nargs="+", help="ncu --page source --csv exports")
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--extra", action="append", default=[], help="another column to sum (substring match)")
    ap.add_argument("--sort-extra", action="store_true", help="order lines by the first --extra column")
    args = ap.parse_args()
    for path in args.csv:
        hot_lines(path, args.top, args.extra, args.sort_extra)
        print()


if __name__ == "__main__":
    main()
