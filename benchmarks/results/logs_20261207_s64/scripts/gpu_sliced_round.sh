#!/bin/bash
# Prepared in the sixty-fourth session (no machine was lent), for the next one: applies decode_sliced.patch (the
# state of branch exp/decode-sliced against main: the decode kernel's tiles-per-program path, its tests, the
# copy structures' new rows and the A/B tool's config syntax) to the device's copy of main, then
#   1. decode_config_ab.py --batch: 8x1he (the batch table's config at N * HV in (256, 2048]) against 16 tiles per
#      program at 2-4 stages and 8 tiles at 3, N = 32..512, 3 rounds interleaved;
#   2. the GPU tests of the path (bits against one tile per program at the benchmark's shape);
#   3. decode_copy_structures.py: the copy structures, pipelined tiles after the pool index among them.
# About 4 minutes on an H200.
T0=$(date +%s)
P=benchmarks/results/logs_20261207_s64/scripts/decode_sliced.patch
git apply "$P" 2>/dev/null || patch -p1 < "$P" || { echo "patch failed"; exit 1; }
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv > $OUT/card.log; cat $OUT/card.log
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD
timeout ${AB_S:-150} python3 benchmarks/tools/decode_config_ab.py --batch --rounds 3 --ns 32 64 128 256 512 --configs \
  8x1he 8x1he:16s2 8x1he:16s3 8x1he:16s4 8x1he:8s3 8x1e:16s3 > $OUT/decode_config_ab_sliced.log 2>&1
echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/decode_config_ab_sliced.log
cat $OUT/decode_config_ab_sliced.log
timeout ${TEST_S:-90} python3 -m pytest -q -m gpu tests/kda/test_recurrent_kernel.py \
  -k "tiles_per_program or every_table_config" > $OUT/pytest_recurrent_gpu.log 2>&1
echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/pytest_recurrent_gpu.log
tail -n 5 $OUT/pytest_recurrent_gpu.log
timeout ${PROBE_S:-120} python3 benchmarks/tools/decode_copy_structures.py > $OUT/decode_copy_structures.log 2>&1
echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/decode_copy_structures.log
cat $OUT/decode_copy_structures.log
echo "round done after $(( $(date +%s) - T0 )) s"
