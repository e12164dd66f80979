set -u
export PYTHONUNBUFFERED=1
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w"; done
PYTHONPATH=$PWD:/tmp/site timeout 400 python3 -m pytest -q -m gpu tests -p no:cacheprovider > $OUT/r6_pytest_gpu_all.log 2>&1; echo rc=$?; tail -3 $OUT/r6_pytest_gpu_all.log
PYTHONPATH=$PWD:/tmp/site timeout 150 python3 benchmarks/bench_kda_decode.py --no-sweep --ns 1 2 8 64 128 --out $OUT > $OUT/r6_bench_decode.log 2>&1; echo rc=$?; tail -12 $OUT/r6_bench_decode.log
