set -u
for w in .whl/fla_core*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/fla "$w"; done
export PYTHONUNBUFFERED=1
PYTHONPATH=$PWD timeout 100 python3 benchmarks/bench_kda_prefill.py --ablate intra --modes gate --rows "default,gate evaluated twice" --rep 20 > $OUT/r7_ablate_stash.log 2>&1; echo rc=$?; grep ablate $OUT/r7_ablate_stash.log
PYTHONPATH=$PWD timeout 200 python3 -m pytest -q -m gpu tests/kda/test_chunk_kernel.py tests/kda/test_ops.py -p no:cacheprovider > $OUT/r7_pytest_gpu_chunk.log 2>&1; echo rc=$?; tail -1 $OUT/r7_pytest_gpu_chunk.log
mkdir -p $OUT/a $OUT/b
PYTHONPATH=$PWD:/tmp/fla timeout 110 python3 benchmarks/bench_kda_prefill.py --no-sweep --rep 20 --modes gate --out $OUT/a > $OUT/r7_bench_gate_stash.log 2>&1; echo rc=$?; grep -E "^(B|var)" $OUT/r7_bench_gate_stash.log
PYTHONPATH=$PWD:/tmp/fla timeout 110 python3 benchmarks/bench_kda_prefill.py --no-sweep --rep 20 --modes gate --intra stash_g=0 --out $OUT/b > $OUT/r7_bench_gate_twice.log 2>&1; echo rc=$?; grep -E "^(B|var)" $OUT/r7_bench_gate_twice.log
