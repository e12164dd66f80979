#!/bin/bash
# Sixty-fifth session, run 1 when little device time is left (carry .whl), about 4 minutes: gpu_round1.sh at
# N = 64 and 128 only, three configs per form, the path's GPU tests, and the decode table once.
T0=$(date +%s)
S=benchmarks/results/logs_20261207_s65/scripts
git apply $S/decode_sliced_v2.patch || { echo "patch failed"; exit 1; }
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/fla_core-0.6.0-py3-none-any.whl
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv > $OUT/card.log; cat $OUT/card.log
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD
timeout 80 python3 benchmarks/tools/decode_config_ab.py --batch --rounds 3 --ns 64 128 --configs \
  8x1he 8x1he:16s3 8x1he:16s2 > $OUT/ab_batch.log 2>&1
echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/ab_batch.log
timeout 80 python3 benchmarks/tools/decode_config_ab.py --rounds 3 --ns 64 128 --configs \
  8x1h 8x1h:16s3 8x1h:16s2 > $OUT/ab_varlen.log 2>&1
echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/ab_varlen.log
cat $OUT/ab_batch.log $OUT/ab_varlen.log
timeout 60 python3 -m pytest -q -m gpu tests/kda/test_recurrent_kernel.py -k "tiles_per_program" \
  > $OUT/pytest_recurrent_gpu.log 2>&1
echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/pytest_recurrent_gpu.log
tail -n 5 $OUT/pytest_recurrent_gpu.log
git apply $S/tables_16s3.patch || { echo "table patch failed"; exit 1; }
mkdir -p $OUT/json
PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site timeout 60 python3 benchmarks/bench_kda_decode.py --out $OUT/json \
  --ns 64 128 --no-sweep > $OUT/bench_decode_1.log 2>&1
echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/bench_decode_1.log
tail -n 10 $OUT/bench_decode_1.log
