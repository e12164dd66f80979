#!/bin/bash
# run 3 (tree 7b29dde: stage 1's exponentials as ex2.approx.ftz): the prefill table's five cells with
# precomputed g (the ones ftz moved, run 1) and the varlen cell with the in-kernel gate (cut by the
# time limit in the thirty-fifth session's table), side by side with FLA; the device time left did
# not cover the whole table
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/fla "$w"; done
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD:/tmp/fla
s0=$(date +%s)
timeout 260 python3 benchmarks/bench_kda_prefill.py --no-sweep --modes g --out $OUT > $OUT/r3_bench_prefill_g.log 2>&1
echo "rc $? after $(( $(date +%s) - s0 )) s" >> $OUT/r3_bench_prefill_g.log
timeout 120 python3 benchmarks/bench_kda_prefill.py --no-sweep --modes gate --cases varlen7_16384 --out $OUT > $OUT/r3_bench_prefill_varlen_gate.log 2>&1
echo "rc $? after $(( $(date +%s) - s0 )) s" >> $OUT/r3_bench_prefill_varlen_gate.log
tail -n 14 $OUT/r3_bench_prefill_g.log; tail -n 6 $OUT/r3_bench_prefill_varlen_gate.log
