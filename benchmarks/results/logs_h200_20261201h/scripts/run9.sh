# run 9: the prefill GPU tests after the scale split (query scales outside 2^-6..2^6 scale o after the
# kernels) and the float64 cumsum of the torch path; a repeated eager prefill with scale 1e-5
set -u
export PYTHONPATH=$PWD:$PWD/benchmarks PYTHONUNBUFFERED=1
timeout 420 python3 -m pytest -v -m gpu --durations=8 tests/kda/test_ops.py tests/kda/test_chunk_kernel.py \
  tests/kda/test_track.py > $OUT/r9_pytest_gpu_prefill.log 2>&1
echo "exit $?" | tee -a $OUT/r9_pytest_gpu_prefill.log
grep -E "FAILED|ERROR|passed|failed" $OUT/r9_pytest_gpu_prefill.log | tail -15
