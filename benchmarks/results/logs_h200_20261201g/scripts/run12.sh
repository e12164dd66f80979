# run 12: run 6's GPU test command again on the final code, with per-test durations, to see whether its
# stop at the time limit comes back
set -u
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1
timeout 300 python3 -m pytest -v -m gpu --durations=12 tests/kda/test_recurrent_kernel.py tests/kda/test_fla_keywords.py \
  tests/kda/test_backend.py tests/kda/test_verify.py tests/integrations 2>&1 | grep -v "PASSED" | tail -30 | tee $OUT/r12_pytest_gpu.log
echo "exit ${PIPESTATUS[0]}" | tee -a $OUT/r12_pytest_gpu.log
