#!/bin/bash
# Fifty-seventh session: the prefill table on main on an H200 (any other card exits at once) within
# RUN_S seconds (default 420, what the session's device time allowed): in-kernel gate first (its B1 T8192 cell
# was the lowest, 1.991x, on e76daff, before exp/one-part-pdl was merged), then precomputed g with the time
# left, then the geomean of what finished. Steps as logs_h100_20261205b/scripts/h200_table.sh. Carry .whl.
export PYTHONUNBUFFERED=1
T0=$(date +%s); RUN_S=${RUN_S:-420}
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv > $OUT/gpu.log; cat $OUT/gpu.log
grep -q H200 $OUT/gpu.log || { echo "not an H200: nothing run"; exit 0; }
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/fla_core-0.6.0-py3-none-any.whl
mkdir -p $OUT/json
for m in gate g; do
  left=$(( RUN_S - ($(date +%s) - T0) )); [ $left -lt 60 ] && break
  PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site timeout $left python3 benchmarks/bench_kda_prefill.py --no-sweep \
    --modes $m --out $OUT/json > $OUT/bench_prefill_$m.log 2>&1
  echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/bench_prefill_$m.log
  tail -n 14 $OUT/bench_prefill_$m.log
done
python3 benchmarks/tools/prefill_table_geomean.py $OUT/json/kda_prefill_*.json > $OUT/table_geomeans.log 2>&1
cat $OUT/table_geomeans.log
