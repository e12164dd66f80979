#!/bin/bash
# run 3: as run 2, the off-diagonal exponents now a batched [NS, BC, BC] product like the hierarchy's (uncommitted
# on fbb14d0) against fbb14d0 (.exp/base = git archive fbb14d0 kimiops): round_ab.py one process per
# tree, alternating over two rounds (accuracy in the first), then the prefill accuracy GPU tests and
# the two tf32 tests of the new tree
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w"; done
export PYTHONUNBUFFERED=1
S=benchmarks/results/logs_h200_20261202b/scripts/round_ab.py
for r in 0 1; do
  acc=""; [ $r = 1 ] && acc="--no-accuracy"
  for t in base new; do
    tree=$PWD; [ $t = base ] && tree=$PWD/.exp/base
    PYTHONPATH=$tree:$PWD/benchmarks:/tmp/site timeout 150 python3 $S $acc > $OUT/r3_round_ab_${t}_$r.log 2>&1; echo "rc $?" >> $OUT/r3_round_ab_${t}_$r.log
  done
done
export PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site
timeout 200 python3 -m pytest -q -s -m gpu tests/kda/test_chunk_kernel.py tests/kda/test_dot_operands.py -k "accuracy or lower_bound or anchored or huge or operand or tf32" > $OUT/r3_pytest_accuracy.log 2>&1; echo "rc $?" >> $OUT/r3_pytest_accuracy.log
# the two tf32 tests take the `device` fixture (CUDA when present) and carry no gpu marker
timeout 100 python3 -m pytest -q tests/kda/test_chunk_kernel.py -k "tb_exact or fp32_v_enters" >> $OUT/r3_pytest_accuracy.log 2>&1; echo "rc $?" >> $OUT/r3_pytest_accuracy.log
tail -8 $OUT/r3_pytest_accuracy.log; grep -h "^time\|^accuracy" $OUT/r3_round_ab_*.log
