#!/bin/bash
# Fifty-eighth session: the fifty-seventh session's gpu_next.sh (racecheck on seed 58's 40 public calls, which
# raced before that session's fix, then the decode GPU tests; on an H200 then the prefill table); on any
# other card then racecheck on 40 calls of a new seed (59) with the time left. Carry .whl.
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD
T0=$(date +%s)
bash benchmarks/results/logs_20261206_s57/scripts/gpu_next.sh
KDA="--kernel-name kns=chunk_ --kernel-name kns=recurrent_kda --kernel-name kns=segment_starts --kernel-name kns=longest_first"
grep -q H200 $OUT/gpu.log && exit 0  # the table took the time
LEFT=$(( 560 - ($(date +%s) - T0) ))
timeout $LEFT compute-sanitizer --tool racecheck --racecheck-report all --print-limit 8 --error-exitcode 3 $KDA \
  python3 benchmarks/tools/fuzz_public_ops.py --device cuda --calls 40 --seed 59 --big-dims 0.25 > $OUT/racecheck_seed59.log 2>&1
echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/racecheck_seed59.log
grep -h "SUMMARY\|ERROR SUMMARY\|rc " $OUT/racecheck_seed59.log
