#!/bin/bash
# Sixty-sixth session, run 3 (carry .whl; needs_h200, since runs 1-2 came on an H100; not run: no H200 came).
# About 3 minutes:
#   1. main's issue-4 decode table at N = 1, 8, 64 (ours vs FLA 0.6 in one process);
#   2. gpu_round1.sh without its decode table: decode_sliced_v2.patch, the A/B of both forms at N = 32..512 and
#      the path's GPU tests, as in run 1.
T0=$(date +%s)
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/fla_core-0.6.0-py3-none-any.whl
mkdir -p $OUT/json
PYTHONUNBUFFERED=1 PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site timeout 90 python3 benchmarks/bench_kda_decode.py \
  --out $OUT/json --ns 1 8 64 --no-sweep > $OUT/bench_decode_main.log 2>&1
echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/bench_decode_main.log; cat $OUT/bench_decode_main.log
BENCH_RUNS=0 bash benchmarks/results/logs_20261207_s65/scripts/gpu_round1.sh
