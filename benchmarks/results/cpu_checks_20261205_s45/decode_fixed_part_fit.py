"""The line through the decode graph medians of logs_h200_20261205b/r1_bench_decode.log (N >= 64):
time = a * N + b, fitted on N = 128 and 512, checked at N = 64 and 256; b's share of the call at N = 64.
    python3 benchmarks/results/cpu_checks_20261205_s45/decode_fixed_part_fit.py"""
import re
from pathlib import Path

log = Path(__file__).resolve().parents[1] / "logs_h200_20261205b" / "r1_bench_decode.log"
graph = {}
for line in log.read_text().splitlines():
    m = re.match(r"\s+(\d+)\s+\S+/\S+\s+([\d.]+)\s", line)
    if m:
        graph[int(m.group(1))] = float(m.group(2))
a = (graph[512] - graph[128]) / (512 - 128)
b = graph[128] - 128 * a
print(f"graph medians (us): {graph}")
print(f"fit on N = 128, 512: {a:.4f} us per request + {b:.2f} us per call")
for n in (64, 256):
    print(f"N = {n}: fit {a * n + b:.2f} us, measured {graph[n]:.2f} us")
print(f"fixed part at N = 64: {b / graph[64]:.1%} of the call; the call without it at the measured "
      f"91.9%: {91.9 * graph[64] / (graph[64] - b):.1f}%")
