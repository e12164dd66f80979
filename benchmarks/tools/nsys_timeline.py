"""Print the GPU timeline of the last kernels of an Nsight Systems trace (start, end, duration in us
relative to the first printed kernel), e.g. to see how pipelined prefill parts overlap:

    nsys profile -t cuda -o trace python3 benchmarks/profile_kda_prefill.py --calls 4
    nsys stats -r cuda_gpu_trace -f csv -o trace trace.nsys-rep
    python3 benchmarks/tools/nsys_timeline.py trace_cuda_gpu_trace.csv --last 8
"""
import argparse
import csv


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("csv", help="output of nsys stats -r cuda_gpu_trace -f csv")
    p.add_argument("--last", type=int, default=8, help="kernels to print (the last ones of the trace)")
    args = p.parse_args()
    with open(args.csv, newline="") as f:
        rows = [r for r in csv.DictReader(f) if r.get("Grid X") not in (None, "", "0")]
    rows = rows[-args.last:]
    t0 = int(rows[0]["Start (ns)"])
    print(f"{'kernel':<40} {'grid':>14} {'start':>9} {'end':>9} {'dur':>8}  (us)")
    for r in rows:
        start = (int(r["Start (ns)"]) - t0) / 1e3
        dur = int(r["Duration (ns)"]) / 1e3
        grid = f"{r['Grid X']}x{r['Grid Y']}x{r['Grid Z']}"
        print(f"{r['Name'][:40]:<40} {grid:>14} {start:9.1f} {start + dur:9.1f} {dur:8.1f}")


if __name__ == "__main__":
    main()
