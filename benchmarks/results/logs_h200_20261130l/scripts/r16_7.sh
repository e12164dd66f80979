set -u
for w in .whl/fla_core*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/fla "$w"; done
for w in .whl/transformers*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w"; done
export PYTHONUNBUFFERED=1
PYTHONPATH=$PWD:/tmp/fla timeout 100 python3 .exp/r16/state_crossover.py > $OUT/r7_state_crossover.log 2>&1; cat $OUT/r7_state_crossover.log | tail -6
PYTHONPATH=$PWD:/tmp/fla timeout 100 python3 benchmarks/bench_kda_decode.py --no-sweep --ns 1 8 64 --out $OUT > $OUT/r7_bench_decode.log 2>&1; tail -8 $OUT/r7_bench_decode.log
PYTHONPATH=$PWD:/tmp/site timeout 380 python3 -m pytest -q -m gpu tests -p no:cacheprovider > $OUT/r7_pytest_gpu_all.log 2>&1; tail -3 $OUT/r7_pytest_gpu_all.log
