#!/usr/bin/env bash
# One GPU round on the lent H200: GPU tests, benchmarks and the demo, everything logged under
# $OUT (defaults to ./gpu_out). Expects fla-core's wheel under .whl/ (see README "Benchmarks").
# Usage: bash benchmarks/gpu_round.sh [tests|bench|demo|all] ...
set -uo pipefail
OUT=${OUT:-$PWD/gpu_out}
mkdir -p "$OUT/r"
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
  export PYTHONPATH=$PWD:/tmp/site
else
  export PYTHONPATH=$PWD
fi
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,memory.used --format=csv | tee "$OUT/r/nvidia_smi.txt"
what=${*:-all}
for step in $what; do
  case $step in
    tests|all)
      python3 -m pytest -q -m gpu tests -x --timeout=600 -p no:cacheprovider 2>&1 | tee "$OUT/pytest_gpu.log" | tail -40 ;;
  esac
  case $step in
    decode|bench|all) python3 benchmarks/bench_kda_decode.py --out "$OUT/r" 2>&1 | tee "$OUT/r/bench_decode.log" | tail -30 ;;
  esac
  case $step in
    linear|bench|all) python3 benchmarks/bench_linear.py --out "$OUT/r" --table-out "$OUT/r/sm90.json" 2>&1 | tee "$OUT/r/bench_linear.log" | tail -40 ;;
  esac
  case $step in
    prefill|bench|all) python3 benchmarks/bench_kda_prefill.py --out "$OUT/r" 2>&1 | tee "$OUT/r/bench_prefill.log" | tail -40 ;;
  esac
  case $step in
    demo|all) python3 -m kimiops.cli demo --no-progress 2>&1 | tee "$OUT/r/demo.log" ;;
  esac
done
tar -czf "$OUT/results.tgz" -C "$OUT" r
