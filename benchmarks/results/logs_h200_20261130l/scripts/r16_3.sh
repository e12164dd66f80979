set -u
export PYTHONUNBUFFERED=1
PYTHONPATH=$PWD timeout 120 python3 -m pytest -q -m gpu tests/gemm -p no:cacheprovider -x -k "early or pdl or determin" > $OUT/r3_pytest_gpu_gemm_early.log 2>&1; tail -2 $OUT/r3_pytest_gpu_gemm_early.log
PYTHONPATH=$PWD timeout 120 python3 -m pytest -q tests/gemm -p no:cacheprovider -x -k "early" > $OUT/r3_pytest_gemm_early_cuda.log 2>&1; tail -2 $OUT/r3_pytest_gemm_early_cuda.log
PYTHONPATH=$PWD timeout 300 python3 benchmarks/tools/linear_early_weights.py > $OUT/r3_linear_early_tiles.log 2>&1; cut -c1-420 $OUT/r3_linear_early_tiles.log
PYTHONPATH=$PWD timeout 150 python3 benchmarks/tools/linear_early_weights.py --shapes 6144x2048,2048x4096,1024x2048 --ms 1 --shared-stages --early 2,4 > $OUT/r3_linear_early_shared.log 2>&1; cut -c1-420 $OUT/r3_linear_early_shared.log
