"""Shares of the warp-stall reasons over a kernel's source lines, from an Nsight Compute source page
exported as CSV (``ncu --import R --page source --csv --print-source cuda,sass``, gzipped here):

    python3 stall_reasons.py r3_ncu_intra_g_source.csv.gz [...]
"""
import collections
import csv
import gzip
import sys

for path in sys.argv[1:]:
    total = collections.Counter()
    header = None
    with gzip.open(path, "rt") as f:
        for row in csv.reader(f):
            if len(row) > 10 and row[0] == "Line No":
                header = row
                continue
            if header and len(row) == len(header) and row[0].isdigit():
                for i, name in enumerate(header):
                    if name.startswith("stall_") and "(Not" not in name and row[i]:
                        total[name[6:]] += float(row[i])
    s = sum(total.values())
    print(path, " ".join(f"{k}={v / s * 100:.1f}%" for k, v in total.most_common(10)))
