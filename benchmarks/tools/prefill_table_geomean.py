"""Geomean of the prefill table's cells (``bench_kda_prefill.py`` JSON rows marked ``acceptance``: the
issue's cases and modes), taken from one or several runs: each argument is a JSON file, optionally
``:mode`` to take only that mode's rows from it. Prints each cell (ours / FLA, graph or eager ms,
speedup), the geomean, the lowest cell and how many are at 2x or more; refuses a cell given twice.

    python3 benchmarks/tools/prefill_table_geomean.py benchmarks/results/A.json:g benchmarks/results/B.json:gate
"""
import json
import statistics
import sys


def cells(args):
    out = {}
    for arg in args:
        path, _, mode = arg.partition(":")
        for r in json.load(open(path))["rows"]:
            if r["acceptance"] and (not mode or r["mode"] == mode):
                key = (r["case"], r["mode"])
                if key in out:
                    raise SystemExit(f"{arg}: cell {key} already taken from another file")
                out[key] = r
    return list(out.values())


def main():
    rows = cells(sys.argv[1:])
    for r in rows:
        fla = r.get("fla_graph_ms") or r.get("fla_eager_ms")
        print(f"{r['case']:14s} {r['mode']:5s} ours graph {r['ours_graph_ms']:.3f} ms, FLA {fla:.3f} ms, "
              f"{r['speedup']:.2f}x")
    gm = statistics.geometric_mean(r["speedup"] for r in rows)
    print(f"{len(rows)} cells: geomean {gm:.3f}, lowest {min(r['speedup'] for r in rows):.3f}, "
          f"at 2x or more {sum(r['speedup'] >= 2 for r in rows)}")


if __name__ == "__main__":
    main()
