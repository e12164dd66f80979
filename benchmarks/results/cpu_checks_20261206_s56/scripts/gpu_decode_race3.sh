#!/bin/bash
# Fifty-sixth session: decode_race_call1.py plainly (1000 repeats each), then once under racecheck.
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD
S=benchmarks/results/cpu_checks_20261206_s56/scripts
timeout 120 python3 $S/decode_race_call1.py > $OUT/plain.log 2>&1; echo "rc $?" >> $OUT/plain.log
timeout 200 compute-sanitizer --tool racecheck --racecheck-report all --print-limit 4 --kernel-name kns=recurrent_kda \
  python3 $S/decode_race_call1.py > $OUT/racecheck.log 2>&1; echo "rc $?" >> $OUT/racecheck.log
grep "@@\|rc" $OUT/plain.log; grep -v "Host Frame\|Saved host" $OUT/racecheck.log | grep -E "@@|hazard|Thread|Value|SUMMARY" | head -30
