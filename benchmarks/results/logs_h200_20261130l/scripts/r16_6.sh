set -u
export PYTHONUNBUFFERED=1
PYTHONPATH=$PWD timeout 330 python3 benchmarks/bench_linear.py --out $OUT --table-out kimiops/gemm/tables/sm90.json --workers 16 --warm-tests > $OUT/r6_bench_linear.log 2>&1; grep -v INVALID $OUT/r6_bench_linear.log | tail -8
cp kimiops/gemm/tables/sm90.json $OUT/sm90_table.json
PYTHONPATH=$PWD timeout 150 python3 -m pytest -q -m gpu tests/gemm -p no:cacheprovider > $OUT/r6_pytest_gpu_gemm.log 2>&1; tail -2 $OUT/r6_pytest_gpu_gemm.log
PYTHONPATH=$PWD timeout 100 python3 -m pytest -q tests/gemm -p no:cacheprovider > $OUT/r6_pytest_gemm_cuda.log 2>&1; tail -1 $OUT/r6_pytest_gemm_cuda.log
(time PYTHONPATH=$PWD timeout 100 python3 -m kimiops.cli demo --no-progress) > $OUT/r6_demo.log 2>&1; tail -8 $OUT/r6_demo.log
