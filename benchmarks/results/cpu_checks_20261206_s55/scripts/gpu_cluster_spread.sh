#!/bin/bash
# Fifty-fifth session, branch exp/cluster-spread: every rank of a cluster sums and stores its own rows
# (n % splits == rank) and padded tokens' columns are not read, instead of rank 0 reading everything.
# Carry .exp/main (= git archive main kimiops). ~5 min warm: the cluster tests, the A/B tool, the committed
# table verified with main's code and the branch's, then (time left) a sweep with the branch's code.
export PYTHONUNBUFFERED=1
T0=$(date +%s)
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv > $OUT/gpu.log
PYTHONPATH=$PWD timeout 120 python3 -m pytest -q -rs tests/gemm/test_linear.py -k "cluster or table_buckets" > $OUT/pytest_cluster.log 2>&1
echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/pytest_cluster.log
PYTHONPATH=$PWD timeout 120 python3 benchmarks/tools/linear_cluster_ab.py --shapes 1024x2048,2624x2048,4096x7168,1024x6144 \
  --ms 1,8,32 --splits 2,3,4,6,8 --rings 128x3,256x3,256x4 > $OUT/linear_cluster_ab.log 2>&1
echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/linear_cluster_ab.log
mkdir -p $OUT/json_main $OUT/json_spread $OUT/json_sweep
for tree in main spread; do
  if [ $tree = main ]; then P=$PWD/.exp/main:$PWD; else P=$PWD; fi
  PYTHONPATH=$P timeout 60 python3 benchmarks/bench_linear.py --out $OUT/json_$tree --verify kimiops/gemm/tables/sm90.json \
    > $OUT/verify_$tree.log 2>&1
  echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/verify_$tree.log
done
left=$(( 570 - ($(date +%s) - T0) ))
PYTHONPATH=$PWD timeout $left python3 benchmarks/bench_linear.py --out $OUT/json_sweep --table-out $OUT/sm90_spread.json \
  --triton-from kimiops/gemm/tables/sm90.json > $OUT/bench_linear_sweep.log 2>&1
echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/bench_linear_sweep.log
grep -h geomean $OUT/verify_*.log $OUT/bench_linear_sweep.log; tail -n 1 $OUT/pytest_cluster.log
