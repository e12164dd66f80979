#!/bin/bash
# Sixty-third session, run 5 (carry .whl), within LIMIT_S seconds (default 580): the timeline tool's per-call
# summary (it now splits the listing by kernel count), the issue-4 decode table with
# N = 512 as well, then on an H200 the issue-3 prefill table on main (the fifty-seventh session's bounded
# script: in-kernel gate, then precomputed g, then the geomean of what finished).
T0=$(date +%s); LIMIT_S=${LIMIT_S:-580}
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv > $OUT/card.log; git log --oneline -1 > $OUT/rev.log 2>&1
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w" 2>/dev/null; done
PYTHONPATH=$PWD python3 benchmarks/tools/prefill_timeline.py --seq-len 8192 --gate > $OUT/timeline_t8192_gate.log 2>&1
head -n 5 $OUT/timeline_t8192_gate.log
mkdir -p $OUT/decode_json
PYTHONUNBUFFERED=1 PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site timeout 120 python3 benchmarks/bench_kda_decode.py \
  --out $OUT/decode_json --ns 1 2 8 64 128 512 --no-sweep > $OUT/bench_decode.log 2>&1
tail -n 22 $OUT/bench_decode.log
RUN_S=$(( LIMIT_S - 10 - ($(date +%s) - T0) )) bash benchmarks/results/logs_20261206_s57/scripts/h200_table_bounded.sh
exit 0
