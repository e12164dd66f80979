"""Summary of run 4's table (kimiops/gemm/tables/sm90.json as written by bench_linear.py --triton-from):
per Gluon bucket its time against the Triton choice it replaced (same process), and the geomean over
the 55 cells of cuBLAS / the table's choice with and without the Gluon buckets.

    python benchmarks/results/logs_h200_20261130m/scripts/table_gluon_summary.py kimiops/gemm/tables/sm90.json
"""
import json
import math
import sys

table = json.load(open(sys.argv[1]))
with_gluon, triton_only, n = [], [], 0
for key, entry in table["shapes"].items():
    for b in entry["buckets"]:
        cub = b["cublas_us"]
        us = b.get("us", cub)
        prev = us
        if b["backend"] == "gluon":
            n += 1
            prev = b["replaced"].get("us", cub)
            print(f"{key:>11} M<={b['m_max']:<3} gluon {us:7.3f} us, replaced {b['replaced']['backend']} {prev:7.3f} us "
                  f"({prev / us:.3f}x), cuBLAS {cub:7.3f} us")
        with_gluon.append(cub / us)
        triton_only.append(cub / prev)
gm = lambda v: math.exp(sum(map(math.log, v)) / len(v))  # noqa: E731
print(f"{n} Gluon buckets of {len(with_gluon)}; sweep geomean over cuBLAS: {gm(triton_only):.4f}x with the Triton "
      f"choices only, {gm(with_gluon):.4f}x with the Gluon buckets")
