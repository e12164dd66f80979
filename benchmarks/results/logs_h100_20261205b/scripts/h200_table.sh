#!/bin/bash
# Prepared in the forty-ninth session for the next H200 (this session's calls got an H100): the issue's
# table on main beside FLA 0.6, in-kernel gate first (its B1 T8192 cell was the lowest on the H200, 1.98x on
# sub-blocks of 8), then precomputed g, each with room to compile on a cold machine (run 1 here needed
# more than 215 s for the first mode), then the geomean over the ten cells. Carry .whl. ~8 min cold.
export PYTHONUNBUFFERED=1
T0=$(date +%s)
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv > $OUT/gpu.log
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/fla_core-0.6.0-py3-none-any.whl
mkdir -p $OUT/json
for m in gate g; do
  left=$(( 560 - ($(date +%s) - T0) )); [ $left -lt 60 ] && break
  PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site timeout $left python3 benchmarks/bench_kda_prefill.py --no-sweep \
    --modes $m --out $OUT/json > $OUT/bench_prefill_$m.log 2>&1
  echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/bench_prefill_$m.log
done
python3 benchmarks/tools/prefill_table_geomean.py $OUT/json/kda_prefill_*.json > $OUT/table_geomeans.log 2>&1
cat $OUT/table_geomeans.log
