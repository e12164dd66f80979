#!/bin/bash
# Run 1 of the fiftieth session. On an H200: the prefill table on main (sub-blocks of 4, never run
# on an H200) with the forty-ninth session's script. On an H100 (that table was run there last session):
# the cold-start cost of every public call, ours beside FLA 0.6 (first_call_compile.py, never run on a
# GPU), each case's processes with an empty and then a filled Triton cache. Carry .whl.
export PYTHONUNBUFFERED=1
T0=$(date +%s)
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv > $OUT/gpu.log
git log -1 --format=%h > $OUT/tree.log 2>&1
if grep -q H200 $OUT/gpu.log; then
  bash benchmarks/results/logs_h100_20261205b/scripts/h200_table.sh
else
  python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/fla_core-0.6.0-py3-none-any.whl
  PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site timeout 550 python3 benchmarks/tools/first_call_compile.py --fla \
    > $OUT/first_call_compile.log 2>&1
  echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/first_call_compile.log
  cat $OUT/first_call_compile.log
fi
