#!/bin/bash
# Fifty-sixth session, run 1, on branch exp/cluster-spread2 (carry .exp/main = git archive main kimiops):
# every Triton K split count on the shapes with Triton buckets (main's kimiops), then the committed table
# verified with main's code and with the branch's (every cluster rank sums its own rows).
export PYTHONUNBUFFERED=1
T0=$(date +%s)
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv > $OUT/gpu.log
PYTHONPATH=$PWD/.exp/main:$PWD timeout 330 python3 benchmarks/tools/linear_triton_splits.py > $OUT/linear_triton_splits.log 2>&1
echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/linear_triton_splits.log
for tree in main spread; do
  if [ $tree = main ]; then P=$PWD/.exp/main:$PWD; else P=$PWD; fi
  mkdir -p $OUT/json_$tree
  PYTHONPATH=$P timeout 110 python3 benchmarks/bench_linear.py --out $OUT/json_$tree --verify kimiops/gemm/tables/sm90.json \
    > $OUT/verify_$tree.log 2>&1
  echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/verify_$tree.log
done
grep -h "geomean" $OUT/*.log | tail -n 12
