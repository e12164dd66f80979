#!/bin/bash
# Run 1 (forty-fourth session): the stage-1 candidate of exp/blocked-inverse on the GPU: its own tests
# and test_dot_operands.py (test_chunk_kernel.py, ~500 s, in a run of its own),
# three alternating A/B rounds against main, and the aligned-keys accuracy of both beside FLA 0.6.
# Trees (carried): .exp/main = git archive main kimiops; .exp/binv = git archive exp/blocked-inverse
# kimiops tests.
set -o pipefail
export PYTHONUNBUFFERED=1; ROOT=$PWD
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv > $OUT/r1_gpu.log
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w"; done
(cd .exp/binv && PYTHONPATH=$PWD timeout 150 python3 -m pytest -q tests/kda/test_diag_block_inverse.py \
  tests/kda/test_dot_operands.py) > $OUT/r1_pytest_binv.log 2>&1
echo "rc $?" >> $OUT/r1_pytest_binv.log; tail -3 $OUT/r1_pytest_binv.log
for t in main binv; do
  PYTHONPATH=$PWD/.exp/$t:/tmp/site timeout 120 python3 benchmarks/tools/prefill_aligned_keys_accuracy.py \
    > $OUT/r1_aligned_keys_$t.log 2>&1; echo "rc $?" >> $OUT/r1_aligned_keys_$t.log; cat $OUT/r1_aligned_keys_$t.log
done
bash benchmarks/tools/prefill_ab_rounds.sh $OUT r1 3 main binv > $OUT/r1_summary.log 2>&1
(cd $OUT && tar czf r1_round_ab_logs.tgz r1_round_ab_*.log && rm r1_round_ab_*.log)
tail -20 $OUT/r1_summary.log
# test_chunk_kernel.py of the candidate's tree, its GPU tests in 4 concurrent shards (compilation is
# most of its ~500 s in one process)
cd $ROOT/.exp/binv
CUDA_VISIBLE_DEVICES=0 PYTHONPATH=$PWD python3 -m pytest -q --collect-only tests/kda/test_chunk_kernel.py \
  | grep "::" > /tmp/ids.txt
for s in 0 1 2 3; do awk -v s=$s 'NR % 4 == s' /tmp/ids.txt > /tmp/shard$s.txt; done
for s in 0 1 2 3; do
  PYTHONPATH=$PWD timeout 270 python3 -m pytest -q -p no:cacheprovider $(cat /tmp/shard$s.txt) \
    > $OUT/r1_pytest_chunk_kernel_binv_$s.log 2>&1 &
done
wait
for s in 0 1 2 3; do tail -n 1 $OUT/r1_pytest_chunk_kernel_binv_$s.log; done
