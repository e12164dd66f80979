#!/bin/bash
# Fifty-sixth session: decode_race_batch.py plainly (compiles), then under racecheck.
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD
S=benchmarks/results/cpu_checks_20261206_s56/scripts
timeout 120 python3 $S/decode_race_batch.py > $OUT/plain.log 2>&1; echo "rc $?" >> $OUT/plain.log
timeout 200 compute-sanitizer --tool racecheck --racecheck-report all --print-limit 10 --kernel-name kns=recurrent_kda \
  python3 $S/decode_race_batch.py > $OUT/racecheck.log 2>&1; echo "rc $?" >> $OUT/racecheck.log
grep -v "Host Frame\|Saved host" $OUT/racecheck.log | grep -E "@@|hazard|SUMMARY|rc" | head -40
