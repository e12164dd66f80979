#!/bin/bash
# Sixty-sixth session, run 2 (carry .whl), meant for an H200 (run 1 came on an H100). About 5 minutes:
#   1. decode_sliced_v2.patch and the A/B of both forms at N = 32..512 (the tables' config against 16 tiles per
#      program at 2-3 stages and 8 at 3), as in run 1;
#   2. the issue-3 prefill cells with the lower-bound gate, ours vs FLA 0.6 safe_gate
#      (logs_20261206_s63/scripts/gpu_lower_bound.sh), to re-check the README's figure.
T0=$(date +%s)
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv > $OUT/card.log; cat $OUT/card.log
git apply benchmarks/results/logs_20261207_s65/scripts/decode_sliced_v2.patch || { echo "patch failed"; exit 1; }
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD
for form in varlen batch; do
  if [ $form = batch ]; then F="--batch --configs 8x1he 8x1he:16s3 8x1he:16s2 8x1he:8s3"
  else F="--configs 8x1h 8x1h:16s3 8x1h:16s2 8x1h:8s3"; fi
  timeout 130 python3 benchmarks/tools/decode_config_ab.py --rounds 3 --ns 32 64 128 512 $F > $OUT/ab_$form.log 2>&1
  echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/ab_$form.log; cat $OUT/ab_$form.log
done
git apply -R benchmarks/results/logs_20261207_s65/scripts/decode_sliced_v2.patch
RUN_S=300 bash benchmarks/results/logs_20261206_s63/scripts/gpu_lower_bound.sh
echo "total $(( $(date +%s) - T0 )) s"
