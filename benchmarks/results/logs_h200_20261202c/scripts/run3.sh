#!/bin/bash
# run 3 (tree c694a39 + the test-selection commit: stage 1's exponentials as ex2.approx.ftz): the prefill
# table side by side with FLA (what the session's device time left allowed; no tests)
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/fla "$w"; done
export PYTHONUNBUFFERED=1
s0=$(date +%s)
PYTHONPATH=$PWD:/tmp/fla timeout ${T:-450} python3 benchmarks/bench_kda_prefill.py --no-sweep --out $OUT > $OUT/r3_bench_prefill.log 2>&1
echo "rc $? after $(( $(date +%s) - s0 )) s" >> $OUT/r3_bench_prefill.log
tail -n 30 $OUT/r3_bench_prefill.log
