#!/bin/bash
# Forty-eighth session, the last ~160 s of device time: the lowest cell (B1 T8192) beside FLA 0.6,
# both gate modes, on main (stage 1's inverse on sub-blocks of 4, d275cfc) and on .exp/main (sub-blocks
# of 8, f31d788), new tree first. Carry .whl and .exp.
export PYTHONUNBUFFERED=1
T0=$(date +%s)
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv > $OUT/r1_gpu.log
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/fla_core-0.6.0-py3-none-any.whl
for t in new old; do
  left=$(( 150 - ($(date +%s) - T0) )); [ $left -lt 30 ] && break
  root=$PWD; [ $t = old ] && root=$PWD/.exp/main
  PYTHONPATH=$root:$PWD/benchmarks:/tmp/site timeout $left python3 benchmarks/bench_kda_prefill.py --no-sweep \
    --cases B1_T8192 --modes g,gate --out $OUT > $OUT/r1_bench_b1_t8192_$t.log 2>&1
  echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/r1_bench_b1_t8192_$t.log
done
tail -n 12 $OUT/r1_bench_b1_t8192_*.log
