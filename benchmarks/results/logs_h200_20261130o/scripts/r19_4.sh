set -u
export PYTHONUNBUFFERED=1
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w" 2>/dev/null; done
export PYTHONPATH=$PWD:/tmp/site
git log --oneline -1 2>/dev/null
timeout 420 python3 benchmarks/bench_kda_prefill.py --no-sweep --rep 20 --out $OUT > $OUT/r4_bench_prefill.log 2>&1; echo rc=$?
grep -v "^ *$" $OUT/r4_bench_prefill.log | tail -30
timeout 150 python3 -m pytest -q -m gpu tests/kda/test_chunk_kernel.py tests/test_launch.py -p no:cacheprovider > $OUT/r4_pytest_gpu_chunk.log 2>&1; echo rc=$?; tail -3 $OUT/r4_pytest_gpu_chunk.log
