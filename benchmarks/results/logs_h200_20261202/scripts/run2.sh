#!/bin/bash
# run 2 (run 1 without the pytest line imported the new tree in both processes): tf32 operands rounded to nearest (stage 1's inverse and w, the state stage's u) and the
# anchored diagonal's A_qk diagonal in fp32, against HEAD before (.exp/base, git archive of 02883e2):
# one process per tree, alternating over two rounds (accuracy in the first; kimiops imported before
# bench_kda_prefill, which puts the repository root first on sys.path), then the prefill
# accuracy GPU tests of the new tree with their prints
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w"; done
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > $OUT/r2_gpu.txt 2>&1
S=benchmarks/results/logs_h200_20261202/scripts/round_ab.py
for r in 0 1; do
  acc=""; [ $r = 1 ] && acc="--no-accuracy"
  for t in base new; do
    tree=$PWD; [ $t = base ] && tree=$PWD/.exp/base
    PYTHONPATH=$tree:$PWD/benchmarks:/tmp/site timeout 170 python3 $S $acc > $OUT/r2_round_ab_${t}_$r.log 2>&1; echo "rc $?" >> $OUT/r2_round_ab_${t}_$r.log
  done
done
export PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site
timeout 300 python3 -m pytest -q -s -m gpu tests/kda/test_chunk_kernel.py tests/kda/test_dot_operands.py -k "accuracy or lower_bound or anchored or huge or operand or tf32" > $OUT/r2_pytest_accuracy.log 2>&1; echo "rc $?" >> $OUT/r2_pytest_accuracy.log
