# run 2: run 1's GPU test command again on the warm machine (run 1 stopped it at 280 s inside the
# transformers test, on a cold Triton cache), with a longer limit and the whole log
set -u
export PYTHONPATH=$PWD:$PWD/benchmarks PYTHONUNBUFFERED=1
timeout 500 python3 -m pytest -v -m gpu --durations=12 tests/kda/test_recurrent_kernel.py tests/kda/test_fla_keywords.py \
  tests/kda/test_backend.py tests/kda/test_verify.py tests/integrations > $OUT/r2_pytest_gpu.log 2>&1
echo "exit $?" | tee -a $OUT/r2_pytest_gpu.log
tail -25 $OUT/r2_pytest_gpu.log
