# run 1: the GPU tests of decode and the integrations on the 28th session's final code (its review
# fixes were CPU-tested only), then the small-program linear configs against auto and cuBLAS
set -u
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w"; done
export PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit --format=csv | tee $OUT/r1_gpu.txt
timeout 280 python3 benchmarks/tools/linear_small_programs.py 2>&1 | tee $OUT/r1_linear_small_programs.log
timeout 280 python3 -m pytest -v -m gpu --durations=8 tests/kda/test_recurrent_kernel.py tests/kda/test_fla_keywords.py \
  tests/kda/test_backend.py tests/kda/test_verify.py tests/integrations 2>&1 | grep -v "PASSED" | tail -30 | tee $OUT/r1_pytest_gpu.log
echo "exit ${PIPESTATUS[0]}" | tee -a $OUT/r1_pytest_gpu.log
