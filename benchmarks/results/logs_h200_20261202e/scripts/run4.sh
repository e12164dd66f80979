#!/bin/bash
# run 4: main (.exp/main = git archive bbb611a kimiops) against the working tree (.exp/new, a copy of its
# kimiops/: stage 1's score products of the factored tiles with themselves, the pairs selected from
# the product instead of masked operands); prefill_round_ab.py one process per tree, alternating over
# two rounds (accuracy in the first); then the table's gate cells (five, FLA
# 0.6 in the same process) on the working tree
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w"; done
export PYTHONUNBUFFERED=1
T0=$(date +%s)
for r in 0 1; do
  acc=""; [ $r = 1 ] && acc="--no-accuracy"
  for t in main new; do
    s0=$(date +%s)
    PYTHONPATH=$PWD/.exp/$t:$PWD/benchmarks:/tmp/site timeout 150 python3 benchmarks/tools/prefill_round_ab.py $acc > $OUT/r4_round_ab_${t}_$r.log 2>&1
    echo "rc $? after $(( $(date +%s) - s0 )) s" >> $OUT/r4_round_ab_${t}_$r.log
  done
done
grep -h "^kimiops\|^time\|^accuracy\|^rc" $OUT/r4_round_ab_*.log
left=$(( 560 - ($(date +%s) - T0) ))
echo "table with $left s left"
PYTHONPATH=$PWD/.exp/new:$PWD/benchmarks:/tmp/site timeout $left python3 benchmarks/bench_kda_prefill.py --no-sweep --modes gate --out $OUT > $OUT/r4_bench_prefill.log 2>&1
echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/r4_bench_prefill.log
tail -20 $OUT/r4_bench_prefill.log
