#!/bin/bash
# Fifty-sixth session, run 3, on main (carry .whl). On an H200 (the card): the Triton linear's split
# counts (run 1 ran them on an H100), then, with the time left, the prefill table beside FLA 0.6. On an H100:
# short runs of the two linear tools that take their cuBLAS / auto baselines from bench_linear.cell_baselines
# since the fifty-fifth session and had not run on a GPU since.
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD
T0=$(date +%s)
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv > $OUT/gpu.log
if grep -q H200 $OUT/gpu.log; then
  timeout 150 python3 benchmarks/tools/linear_triton_splits.py > $OUT/linear_triton_splits.log 2>&1
  echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/linear_triton_splits.log
  python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/fla_core-0.6.0-py3-none-any.whl
  mkdir -p $OUT/json_prefill
  for m in gate g; do
    left=$(( 585 - ($(date +%s) - T0) )); [ $left -lt 60 ] && break
    PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site timeout $left python3 benchmarks/bench_kda_prefill.py \
      --no-sweep --modes $m --out $OUT/json_prefill > $OUT/bench_prefill_$m.log 2>&1
    echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/bench_prefill_$m.log
  done
  python3 benchmarks/tools/prefill_table_geomean.py $OUT/json_prefill/kda_prefill_*.json > $OUT/table_geomeans.log 2>&1
  cat $OUT/table_geomeans.log
else
  timeout 120 python3 benchmarks/tools/linear_cluster_ab.py --shapes 1024x2048 --ms 1,32 --splits 2,4 --rings 256x3 \
    > $OUT/linear_cluster_ab.log 2>&1
  echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/linear_cluster_ab.log
  timeout 120 python3 benchmarks/tools/linear_small_programs.py --shapes 1024x2048 --ms 1,32 > $OUT/linear_small_programs.log 2>&1
  echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/linear_small_programs.log
  tail -n 3 $OUT/linear_cluster_ab.log $OUT/linear_small_programs.log
fi
