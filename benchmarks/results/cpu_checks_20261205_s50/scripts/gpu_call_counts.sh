#!/bin/bash
# Prepared in the fiftieth session (no device time left to run it): the prefill kernels' call counts left
# unspecialized (161cc28) on a GPU. Carry .whl and .exp/before (git archive 7ee207b kimiops: the tree before).
# 1. Cold start of a fresh server's first ten extends (first_call_compile.py's extend_walk), before and after,
#    and the varlen case, ours only (each process compiles into its own empty Triton cache).
# 2. The GPU tests of the eager shortcut, the replays, the fast launch path and graphs.
export PYTHONUNBUFFERED=1
T0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $OUT/gpu.log
for tree in before main; do
  root=$PWD; [ $tree = before ] && root=$PWD/.exp/before
  PYTHONPATH=$root:$PWD/benchmarks timeout 200 python3 benchmarks/tools/first_call_compile.py \
    --cases extend_walk,prefill_g_varlen7 > $OUT/first_call_compile_$tree.log 2>&1
  echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/first_call_compile_$tree.log
  cat $OUT/first_call_compile_$tree.log
done
left=$(( 580 - ($(date +%s) - T0) ))
PYTHONPATH=$PWD timeout $left python3 -m pytest -q -p no:cacheprovider tests/kda/test_prefill_replay.py tests/test_launch.py \
  tests/kda/test_chunk_kernel.py -k "eager or replay or fast_launch or cuda_graph or parts or segments or key" \
  > $OUT/pytest_call_counts.log 2>&1
echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/pytest_call_counts.log
tail -n 4 $OUT/pytest_call_counts.log
