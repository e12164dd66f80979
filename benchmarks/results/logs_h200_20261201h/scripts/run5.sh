# run 5: GPU tests of kimiops.linear after the audit fixes (out overlap check, dtype in the decision
# memo, N = 0, fp32 out with grad enabled)
set -u
export PYTHONPATH=$PWD:$PWD/benchmarks PYTHONUNBUFFERED=1
timeout 560 python3 -m pytest -v -m gpu --durations=10 tests/gemm > $OUT/r5_pytest_gpu_gemm.log 2>&1
echo "exit $?" | tee -a $OUT/r5_pytest_gpu_gemm.log
grep -E "FAILED|ERROR|passed|failed" $OUT/r5_pytest_gpu_gemm.log | tail -15
