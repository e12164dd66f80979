#!/usr/bin/env bash
# Run 10: target verify with a draft tree against the same step as a chain (timing; the tree's
# output and states against the torch path).
set -uo pipefail
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w"; done
export PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site PYTHONUNBUFFERED=1
timeout 240 python3 benchmarks/bench_kda_decode.py --ns 1 --no-sweep --spec-ns --verify-tree-ns 1 8 64 \
  --out $OUT > $OUT/r10_bench_decode.log 2>&1
tail -8 $OUT/r10_bench_decode.log
