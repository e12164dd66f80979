# run 4: GPU tests of the KDA ops, decode, backend, verify, FLA keywords and the integrations after the
# audit fixes (strided small tensors refused, calls without tokens, vLLM adapters' strided indices)
set -u
export PYTHONPATH=$PWD:$PWD/benchmarks PYTHONUNBUFFERED=1
timeout 560 python3 -m pytest -v -m gpu --durations=10 tests/kda/test_recurrent_kernel.py tests/kda/test_fla_keywords.py \
  tests/kda/test_backend.py tests/kda/test_verify.py tests/kda/test_ops.py tests/integrations > $OUT/r4_pytest_gpu.log 2>&1
echo "exit $?" | tee -a $OUT/r4_pytest_gpu.log
grep -E "FAILED|ERROR|passed|failed" $OUT/r4_pytest_gpu.log | tail -15
