#!/bin/bash
# Fifty-fifth session: the committed linear table (300cd2f) against a fresh sweep with the cluster split-K
# hand-off and the wider split counts, on one machine: the old table verified through kimiops.linear(auto)
# beside cuBLAS, then the sweep (which verifies its own table), then tests/gemm's GPU tests on the new table.
# ~6 min warm. The new table goes into the working copy and $OUT.
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD
T0=$(date +%s)
S=benchmarks/results/cpu_checks_20261206_s55
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv > $OUT/gpu.log
mkdir -p $OUT/json_old $OUT/json_new
timeout 100 python3 benchmarks/bench_linear.py --out $OUT/json_old --verify $S/sm90_table_300cd2f.json > $OUT/bench_linear_old.log 2>&1
echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/bench_linear_old.log
timeout 300 python3 benchmarks/bench_linear.py --out $OUT/json_new --table-out $OUT/sm90.json \
  --triton-from $S/sm90_table_300cd2f.json > $OUT/bench_linear_sweep.log 2>&1
echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/bench_linear_sweep.log
[ -s $OUT/sm90.json ] && cp $OUT/sm90.json kimiops/gemm/tables/sm90.json
left=$(( 585 - ($(date +%s) - T0) ))
timeout $left python3 -m pytest -q -rs tests/gemm > $OUT/pytest_gemm_gpu.log 2>&1
echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/pytest_gemm_gpu.log
grep geomean $OUT/bench_linear_old.log $OUT/bench_linear_sweep.log; tail -n 2 $OUT/pytest_gemm_gpu.log
