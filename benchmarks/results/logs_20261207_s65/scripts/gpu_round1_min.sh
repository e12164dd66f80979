#!/bin/bash
# Sixty-fifth session, run 1 at the least device time (about 2 minutes): the A/B of both forms at N = 64 only
# (the open figure), three configs each, and the path's GPU tests.
T0=$(date +%s)
S=benchmarks/results/logs_20261207_s65/scripts
git apply $S/decode_sliced_v2.patch || { echo "patch failed"; exit 1; }
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv > $OUT/card.log; cat $OUT/card.log
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD
timeout 60 python3 benchmarks/tools/decode_config_ab.py --rounds 3 --ns 64 --configs \
  8x1h 8x1h:16s3 8x1h:16s2 > $OUT/ab_varlen.log 2>&1
echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/ab_varlen.log
timeout 50 python3 benchmarks/tools/decode_config_ab.py --batch --rounds 3 --ns 64 --configs \
  8x1he 8x1he:16s3 8x1he:16s2 > $OUT/ab_batch.log 2>&1
echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/ab_batch.log
cat $OUT/ab_varlen.log $OUT/ab_batch.log
timeout 50 python3 -m pytest -q -m gpu tests/kda/test_recurrent_kernel.py -k "tiles_per_program" \
  > $OUT/pytest_recurrent_gpu.log 2>&1
echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/pytest_recurrent_gpu.log
tail -n 5 $OUT/pytest_recurrent_gpu.log
