#!/bin/bash
# Prepared in the fifty-seventh session for the next GPU (its device time was spent): the decode fix of that
# session (the error's products rounded at head dims <= 32) under racecheck on the 40 calls of seed 58 that
# raced (run 4), then the decode kernel's GPU tests; on an H200 then the prefill table with the time left
# (h200_table_bounded.sh). Carry .whl. ~4 min, ~10 with the table.
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD
T0=$(date +%s)
nvidia-smi --query-gpu=name --format=csv,noheader > $OUT/gpu.log; cat $OUT/gpu.log
KDA="--kernel-name kns=chunk_ --kernel-name kns=recurrent_kda --kernel-name kns=segment_starts --kernel-name kns=longest_first"
timeout 150 compute-sanitizer --tool racecheck --racecheck-report all --print-limit 8 --error-exitcode 3 $KDA \
  python3 benchmarks/tools/fuzz_public_ops.py --device cuda --calls 40 --seed 58 --big-dims 0.25 > $OUT/racecheck_seed58.log 2>&1
echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/racecheck_seed58.log
timeout 200 python3 -m pytest -q -p no:cacheprovider tests/kda/test_recurrent_kernel.py tests/kda/test_decode_replay.py \
  tests/kda/test_verify.py > $OUT/pytest_decode.log 2>&1; echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/pytest_decode.log
grep -h "SUMMARY\|failed\|passed\|rc " $OUT/*.log
grep -q H200 $OUT/gpu.log && RUN_S=$(( 570 - ($(date +%s) - T0) )) bash benchmarks/results/logs_20261206_s57/scripts/h200_table_bounded.sh
