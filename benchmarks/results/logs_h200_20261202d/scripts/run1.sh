#!/bin/bash
# run 1: main (.exp/main = git archive 093ea8c kimiops) against the mild-anchor candidate
# (.exp/mild = git archive exp/mild-anchor kimiops) and against the gate's exponentials as exp2 with a
# division-free log1p (.exp/gexp = main + cpu_checks_20261202_s37/candidate_gate_exp2.patch);
# round_ab.py one process per tree, alternating over two rounds (accuracy in the first); then per tree
# the gate's error on the GPU (gate_probe.py) and tests/kda/test_gate.py on the GPU
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w"; done
export PYTHONUNBUFFERED=1
S=benchmarks/results/logs_h200_20261202b/scripts/round_ab.py
D=benchmarks/results/logs_h200_20261202d/scripts
for r in 0 1; do
  acc=""; [ $r = 1 ] && acc="--no-accuracy"
  for t in main mild gexp; do
    s0=$(date +%s)
    PYTHONPATH=$PWD/.exp/$t:$PWD/benchmarks:/tmp/site timeout 150 python3 $S $acc > $OUT/r1_round_ab_${t}_$r.log 2>&1
    echo "rc $? after $(( $(date +%s) - s0 )) s" >> $OUT/r1_round_ab_${t}_$r.log
  done
done
for t in main gexp; do
  (cd /tmp && PYTHONPATH=$OLDPWD/.exp/$t timeout 60 python3 $OLDPWD/$D/gate_probe.py) >> $OUT/r1_gate.log 2>&1
  (cd /tmp && PYTHONPATH=$OLDPWD/.exp/$t timeout 90 python3 -c "
import sys, pytest
rc = pytest.main(['-q', '$OLDPWD/tests/kda/test_gate.py', '-p', 'no:cacheprovider'])
print('kimiops from', sys.modules['kimiops'].__file__, 'rc', rc)") >> $OUT/r1_gate.log 2>&1
done
grep -h "^kimiops\|^time\|^accuracy\|^rc" $OUT/r1_round_ab_*.log
cat $OUT/r1_gate.log | grep -v "^$" | tail -30
