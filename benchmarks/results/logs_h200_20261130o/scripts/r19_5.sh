set -u
export PYTHONUNBUFFERED=1
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w" 2>/dev/null; done
export PYTHONPATH=$PWD:/tmp/site
timeout 330 python3 -m pytest -q -m gpu tests/kda/test_chunk_kernel.py tests/kda/test_ops.py tests/kda/test_backend.py tests/test_launch.py -p no:cacheprovider -rs > $OUT/r5_pytest_gpu_prefill.log 2>&1; echo rc=$?; tail -4 $OUT/r5_pytest_gpu_prefill.log
timeout 200 python3 -m pytest -q -m gpu tests/gemm -p no:cacheprovider -x > $OUT/r5_pytest_gpu_gemm.log 2>&1; echo rc=$?; tail -4 $OUT/r5_pytest_gpu_gemm.log
