#!/bin/bash
# Fifty-fifth session: the Gluon linear's sweep with the cluster split-K hand-off and the wider split
# counts (skinny_gluon.sweep_configs), Triton choices re-timed from the committed table, the new table
# verified through kimiops.linear(backend="auto") beside cuBLAS; then tests/gemm's GPU tests on that table.
# ~8 min on a warm H200. Writes the table into the working copy (kimiops/gemm/tables/sm90.json) and $OUT.
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD
T0=$(date +%s)
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv > $OUT/gpu.log
mkdir -p $OUT/json
timeout 420 python3 benchmarks/bench_linear.py --out $OUT/json --table-out $OUT/sm90.json \
  --triton-from kimiops/gemm/tables/sm90.json > $OUT/bench_linear_sweep.log 2>&1
echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/bench_linear_sweep.log
[ -s $OUT/sm90.json ] && cp $OUT/sm90.json kimiops/gemm/tables/sm90.json
left=$(( 585 - ($(date +%s) - T0) ))
timeout $left python3 -m pytest -q -x -rs tests/gemm > $OUT/pytest_gemm_gpu.log 2>&1
echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/pytest_gemm_gpu.log
tail -2 $OUT/bench_linear_sweep.log $OUT/pytest_gemm_gpu.log
