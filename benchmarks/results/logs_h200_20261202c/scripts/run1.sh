#!/bin/bash
# run 1: stage 1's exponentials as ex2.approx.ftz (.exp/ftz) and that plus the per-K-slice switch to the
# anchored diagonal where a slice's spans are within 40 (.exp/ftzsw) against HEAD (.exp/base), each tree
# `git archive d1b253d kimiops` + .exp/cand/*.patch; round_ab.py one process per tree, alternating over two
# rounds (accuracy in the first)
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w"; done
export PYTHONUNBUFFERED=1
S=benchmarks/results/logs_h200_20261202b/scripts/round_ab.py
for r in 0 1; do
  acc=""; [ $r = 1 ] && acc="--no-accuracy"
  for t in base ftz ftzsw; do
    s0=$(date +%s)
    PYTHONPATH=$PWD/.exp/$t:$PWD/benchmarks:/tmp/site timeout 170 python3 $S $acc > $OUT/r1_round_ab_${t}_$r.log 2>&1
    echo "rc $? after $(( $(date +%s) - s0 )) s" >> $OUT/r1_round_ab_${t}_$r.log
  done
done
grep -h "^kimiops\|^time\|^accuracy\|^rc" $OUT/r1_round_ab_*.log
