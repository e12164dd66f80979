set -u
export PYTHONUNBUFFERED=1
PYTHONPATH=$PWD timeout 420 python3 benchmarks/tools/linear_early_weights.py > $OUT/r2_linear_early_weights.log 2>&1; cat $OUT/r2_linear_early_weights.log | cut -c1-400
PYTHONPATH=$PWD timeout 150 python3 -m pytest -q -m gpu tests/gemm -p no:cacheprovider -x > $OUT/r2_pytest_gpu_gemm.log 2>&1; tail -3 $OUT/r2_pytest_gpu_gemm.log
