#!/usr/bin/env bash
# Run 11: the prefill table of issue 3 (ours vs FLA in one process, graph and eager medians) on the
# session's final code (the prefill kernels did not change; the call path around them did).
set -uo pipefail
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w"; done
export PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site PYTHONUNBUFFERED=1
timeout 300 python3 benchmarks/bench_kda_prefill.py --no-sweep --rep 20 --out $OUT > $OUT/r11_bench_prefill.log 2>&1
tail -20 $OUT/r11_bench_prefill.log
