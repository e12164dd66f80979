# run 8: GPU tests of the second audit round's changes (no-token snapshots, o contiguous and the op's
# fake, FLA's transpose_state_layout, the vLLM prefill adapter with padding rows, the SGLang adapter)
set -u
export PYTHONPATH=$PWD:$PWD/benchmarks PYTHONUNBUFFERED=1
timeout 560 python3 -m pytest -v -m gpu --durations=10 tests/kda/test_ops.py tests/kda/test_track.py \
  tests/kda/test_fla_keywords.py tests/kda/test_verify.py tests/kda/test_backend.py tests/integrations > $OUT/r8_pytest_gpu.log 2>&1
echo "exit $?" | tee -a $OUT/r8_pytest_gpu.log
grep -E "FAILED|ERROR|passed|failed" $OUT/r8_pytest_gpu.log | tail -15
