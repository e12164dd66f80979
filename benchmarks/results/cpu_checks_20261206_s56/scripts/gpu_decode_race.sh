#!/bin/bash
# Fifty-sixth session: decode_race_probe.py plainly (compiles), then under racecheck. ~2 min.
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD
S=benchmarks/results/cpu_checks_20261206_s56/scripts
T0=$(date +%s)
timeout 150 python3 $S/decode_race_probe.py > $OUT/plain.log 2>&1; echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/plain.log
mkdir -p $OUT/ptx_unused
OUT=$OUT/ptx_unused timeout 250 compute-sanitizer --tool racecheck --racecheck-report all --print-limit 100000 \
  --kernel-name kns=recurrent_kda python3 $S/decode_race_probe.py > $OUT/racecheck.log 2>&1
echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/racecheck.log
rm -rf $OUT/ptx_unused
grep -E "^@@|SUMMARY" $OUT/racecheck.log | awk '/@@ call/{c=$0} /hazard|SUMMARY/{print c " :: " $0} /@@ bits/{print}' | head -40
grep -c "hazard detected" $OUT/racecheck.log
