#!/bin/bash
# Sixty-third session, run 7 (carry .whl): the issue's five prefill cells with Kimi-K3's lower-bound gate at -5
# (ours in the kernel; FLA 0.6 with safe_gate, its path for bounded gates), in one process; last timed against
# FLA in the thirty-fifth session's predecessor runs (logs_h200_20261201l/r2_anchor_ab.log).
T0=$(date +%s)
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv > $OUT/card.log; cat $OUT/card.log
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/fla_core-0.6.0-py3-none-any.whl
mkdir -p $OUT/json
PYTHONUNBUFFERED=1 PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site timeout ${RUN_S:-420} python3 benchmarks/bench_kda_prefill.py \
  --no-sweep --modes lb --out $OUT/json > $OUT/bench_prefill_lb.log 2>&1
echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/bench_prefill_lb.log
tail -n 16 $OUT/bench_prefill_lb.log
