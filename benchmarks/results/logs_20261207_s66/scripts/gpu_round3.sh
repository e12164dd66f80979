#!/bin/bash
# Sixty-sixth session, run 3 (carry .whl; needs_h200, since runs 1-2 came on an H100). About 2 minutes:
#   1. main's issue-4 decode table at N = 1, 8, 64 (ours vs FLA 0.6 in one process);
#   2. decode_sliced_v2.patch and the A/B of both forms at N = 32..512, as in runs 1-2.
T0=$(date +%s)
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv > $OUT/card.log; cat $OUT/card.log
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/fla_core-0.6.0-py3-none-any.whl
mkdir -p $OUT/json
PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site timeout 90 python3 benchmarks/bench_kda_decode.py --out $OUT/json --ns 1 8 64 \
  --no-sweep > $OUT/bench_decode_main.log 2>&1
echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/bench_decode_main.log; cat $OUT/bench_decode_main.log
git apply benchmarks/results/logs_20261207_s65/scripts/decode_sliced_v2.patch || { echo "patch failed"; exit 1; }
export PYTHONPATH=$PWD
for form in varlen batch; do
  if [ $form = batch ]; then F="--batch --configs 8x1he 8x1he:16s3 8x1he:16s2 8x1he:8s3"
  else F="--configs 8x1h 8x1h:16s3 8x1h:16s2 8x1h:8s3"; fi
  timeout 100 python3 benchmarks/tools/decode_config_ab.py --rounds 3 --ns 32 64 128 512 $F > $OUT/ab_$form.log 2>&1
  echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/ab_$form.log; cat $OUT/ab_$form.log
done
