#!/bin/bash
# run 2: main (.exp/main = git archive 093ea8c kimiops) against the working tree (.exp/new, a copy of its
# kimiops/: the mild anchor for precomputed g only, the softplus gate without the hardware log);
# benchmarks/tools/prefill_round_ab.py (run 2 ran it as a copy in this folder, scripts/round_ab.py, which
# built the "gk" case itself; bench_kda_prefill.make_case builds the same) one process per tree,
# alternating over two rounds (accuracy in the first); the gate's error on the GPU (gate_probe.py); then on the working tree the
# GPU tests of test_chunk_kernel.py / test_dot_operands.py and the device tests of test_gate.py and
# test_recurrent_kernel.py
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w"; done
export PYTHONUNBUFFERED=1
D=benchmarks/results/logs_h200_20261202d/scripts
for r in 0 1; do
  acc=""; [ $r = 1 ] && acc="--no-accuracy"
  for t in main new; do
    s0=$(date +%s)
    PYTHONPATH=$PWD/.exp/$t:$PWD/benchmarks:/tmp/site timeout 150 python3 benchmarks/tools/prefill_round_ab.py $acc > $OUT/r2_round_ab_${t}_$r.log 2>&1
    echo "rc $? after $(( $(date +%s) - s0 )) s" >> $OUT/r2_round_ab_${t}_$r.log
  done
done
(cd /tmp && PYTHONPATH=$OLDPWD/.exp/new timeout 60 python3 $OLDPWD/$D/gate_probe.py) > $OUT/r2_gate.log 2>&1
grep -h "^kimiops\|^time\|^accuracy\|^rc" $OUT/r2_round_ab_*.log
cat $OUT/r2_gate.log
s0=$(date +%s)
PYTHONPATH=$PWD timeout 330 python3 -m pytest -q -m gpu tests/kda/test_chunk_kernel.py tests/kda/test_dot_operands.py -p no:cacheprovider > $OUT/r2_pytest_chunk.log 2>&1
echo "rc $? after $(( $(date +%s) - s0 )) s" >> $OUT/r2_pytest_chunk.log
tail -4 $OUT/r2_pytest_chunk.log
s0=$(date +%s)
PYTHONPATH=$PWD timeout 120 python3 -m pytest -q -rs tests/kda/test_gate.py tests/kda/test_recurrent_kernel.py -p no:cacheprovider > $OUT/r2_pytest_gate_recurrent.log 2>&1
echo "rc $? after $(( $(date +%s) - s0 )) s" >> $OUT/r2_pytest_gate_recurrent.log
tail -4 $OUT/r2_pytest_gate_recurrent.log
