#!/bin/bash
# run 5: the table's g cells (precomputed g, five cells, FLA 0.6 in the same process) on the working
# tree (.exp/new, as in run 4)
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w"; done
export PYTHONUNBUFFERED=1
T0=$(date +%s)
PYTHONPATH=$PWD/.exp/new:$PWD/benchmarks:/tmp/site timeout 500 python3 benchmarks/bench_kda_prefill.py --no-sweep --modes g --out $OUT > $OUT/r5_bench_prefill.log 2>&1
echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/r5_bench_prefill.log
tail -20 $OUT/r5_bench_prefill.log
