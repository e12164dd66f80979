#!/bin/bash
# run 3 (the working tree: mild anchor for precomputed g, the softplus gate without the hardware log):
# the prefill table's five cells with the in-kernel softplus gate (the cells its change moved), side by side with FLA
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/fla "$w"; done
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD:/tmp/fla
s0=$(date +%s)
timeout 380 python3 benchmarks/bench_kda_prefill.py --no-sweep --modes gate --out $OUT > $OUT/r3_bench_prefill.log 2>&1
echo "rc $? after $(( $(date +%s) - s0 )) s" >> $OUT/r3_bench_prefill.log
tail -n 30 $OUT/r3_bench_prefill.log
