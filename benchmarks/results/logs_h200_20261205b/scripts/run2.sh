#!/bin/bash
# Run 2 (forty-fifth session): stage 1's diagonal-block inverse on smaller sub-blocks. Trees (carried):
# .exp/main = git archive f31d788 kimiops (sub-blocks of 8); .exp/b4 and .exp/b2 the same with
# `_diag_block_inverse(dg_kk, NS, BC, BC // 4 or BC // 8, INV_PREC)` (sub-blocks of 4 or 2: two or
# three exact 2x2-block levels). Three alternating A/B rounds, then the aligned-keys accuracy of
# each tree beside FLA 0.6.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv > $OUT/r2_gpu.log
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/fla_core-0.6.0-py3-none-any.whl
bash benchmarks/tools/prefill_ab_rounds.sh $OUT r2 3 main b4 b2 > $OUT/r2_summary.log 2>&1
(cd $OUT && tar czf r2_round_ab_logs.tgz r2_round_ab_*.log && rm r2_round_ab_*.log)
tail -24 $OUT/r2_summary.log
for t in b4 b2 main; do
  s0=$(date +%s)
  PYTHONPATH=$PWD/.exp/$t:/tmp/site timeout 100 python3 benchmarks/tools/prefill_aligned_keys_accuracy.py \
    > $OUT/r2_aligned_keys_$t.log 2>&1; echo "rc $? after $(( $(date +%s) - s0 )) s" >> $OUT/r2_aligned_keys_$t.log
done
(cd $OUT && tar czf r2_aligned_keys.tgz r2_aligned_keys_*.log)
grep -h "ours\|^rc" $OUT/r2_aligned_keys_*.log | sed 's/  fla.*//'
rm $OUT/r2_aligned_keys_*.log
