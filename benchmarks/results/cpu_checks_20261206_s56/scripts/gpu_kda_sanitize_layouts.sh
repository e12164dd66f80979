#!/bin/bash
# Fifty-sixth session: kda_sanitize_layouts.py plainly (compiles, checks), then under memcheck and racecheck.
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD
S=benchmarks/results/cpu_checks_20261206_s56/scripts
T0=$(date +%s)
timeout 200 python3 $S/kda_sanitize_layouts.py > $OUT/plain.log 2>&1; echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/plain.log
K="--kernel-name kns=chunk_ --kernel-name kns=recurrent_kda --kernel-name kns=segment_starts --kernel-name kns=longest_first"
timeout 180 compute-sanitizer --tool memcheck --error-exitcode 3 $K python3 $S/kda_sanitize_layouts.py > $OUT/memcheck.log 2>&1
echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/memcheck.log
timeout 180 compute-sanitizer --tool racecheck --racecheck-report all --print-limit 20 --error-exitcode 3 $K \
  python3 $S/kda_sanitize_layouts.py > $OUT/racecheck.log 2>&1
echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/racecheck.log
for f in plain memcheck racecheck; do echo "== $f"; grep -v "Host Frame\|Saved host" $OUT/$f.log | grep -E "@@|SUMMARY|rc |rror" | tail -n 16; done
