"""Batch mode's % of copy bandwidth at N = 64 in the sixty-third session's run 3 (H200), which its table does not
print: bytes and ``ours_graph_batch_us`` from ``json{1,2,3}``, the copy bandwidth from ``bench_decode_{1,2,3}.log``.

    python3 benchmarks/results/cpu_checks_20261207_s68/scripts/decode_n64_batch_mode_pct.py
"""
import glob
import json
import re

base = "benchmarks/results/logs_20261206_s63/run3"
for i in (1, 2, 3):
    bw = float(re.search(r"([\d.]+) TB/s", open(f"{base}/bench_decode_{i}.log").read()).group(1))
    for f in glob.glob(f"{base}/json{i}/*.json"):
        for r in json.load(open(f)).get("rows", []):
            if r.get("N") == 64 and "ours_graph_batch_us" in r:
                us = r["ours_graph_batch_us"]
                print(f"run {i}: bytes {r['bytes']}, batch {us:.2f} us, copy {bw} TB/s -> "
                      f"{100 * r['bytes'] / (us * 1e-6) / (bw * 1e12):.2f}% (cu_seqlens form {r['ours_pct_bw']:.2f}%)")
