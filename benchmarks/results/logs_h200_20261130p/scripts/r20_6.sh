set -u
export PYTHONUNBUFFERED=1
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w" 2>/dev/null; done
export PYTHONPATH=$PWD:/tmp/site
timeout 380 python3 benchmarks/bench_kda_prefill.py --no-sweep --rep 20 --extra --out $OUT > $OUT/r6_bench_prefill.log 2>&1; echo rc=$?
grep -v "^ *$" $OUT/r6_bench_prefill.log | tail -22
