#!/bin/bash
# Prepared in the fifty-first session, run 2 of 2 (after gpu_search_ab.sh): the cold start of a fresh
# server's first ten extends (first_call_compile.py's extend_walk) and of the varlen case, per tree:
# before (git archive 7ee207b kimiops: before the fiftieth session's call counts), s50 (9daec9b) and main;
# each process compiles into its own empty Triton cache. Carry .exp/before and .exp/s50. Supersedes
# cpu_checks_20261205_s50/scripts/gpu_call_counts.sh. RUN_S (default 570) bounds the whole run.
export PYTHONUNBUFFERED=1
T0=$(date +%s)
RUN_S=${RUN_S:-570}
left() { echo $(( RUN_S - ($(date +%s) - T0) )); }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $OUT/gpu.log
for tree in before s50 main; do
  [ $(left) -lt 30 ] && break
  root=$PWD; [ $tree != main ] && root=$PWD/.exp/$tree
  PYTHONPATH=$root:$PWD/benchmarks timeout $(left) python3 benchmarks/tools/first_call_compile.py \
    --cases extend_walk,prefill_g_varlen7 > $OUT/first_call_compile_$tree.log 2>&1
  echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/first_call_compile_$tree.log
  tail -n 4 $OUT/first_call_compile_$tree.log
done
echo "total $(( $(date +%s) - T0 )) s"
