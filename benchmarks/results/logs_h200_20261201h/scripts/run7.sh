# run 7: bench_kda_decode.py on the session's final code (the decode kernel did not change; the
# standing issue-4 figures for the note)
set -u
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w"; done
export PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site PYTHONUNBUFFERED=1
timeout 400 python3 benchmarks/bench_kda_decode.py --out $OUT --ns 1 2 8 64 128 --no-sweep 2>&1 | tee $OUT/r7_bench_decode.log
