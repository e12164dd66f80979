#!/bin/bash
# run 2: the working tree (main + the three stage-1 candidates: base-2 span sums, g stash for
# precomputed g, fp16 factor products): the table's ten cells (gate, then g; FLA 0.6 in the same
# process), then every GPU test of tests/kda/test_dot_operands.py (marked and `device`).
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w"; done
export PYTHONUNBUFFERED=1
T0=$(date +%s)
for m in gate g; do
  PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site timeout 200 python3 benchmarks/bench_kda_prefill.py --no-sweep --modes $m --out $OUT > $OUT/r2_bench_prefill_$m.log 2>&1
  echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/r2_bench_prefill_$m.log
  tail -9 $OUT/r2_bench_prefill_$m.log
done
left=$(( 570 - ($(date +%s) - T0) ))
echo "tests with $left s left"
OUT=$OUT/s2 TEST_MARK= TEST_TIMEOUT=$left TESTS="tests/kda/test_dot_operands.py" bash benchmarks/gpu_round.sh tests
cp $OUT/s2/pytest_gpu.log $OUT/r2_pytest_dot_operands.log; rm -r $OUT/s2
