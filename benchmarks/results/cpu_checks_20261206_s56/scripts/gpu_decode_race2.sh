#!/bin/bash
# Fifty-sixth session: the randomized public calls that showed racecheck hazards (seed 57), verbose, so each
# hazard follows the call that made it. ~2 min.
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD
T0=$(date +%s)
timeout 250 compute-sanitizer --tool racecheck --racecheck-report all --print-limit 20 \
  --kernel-name kns=recurrent_kda python3 benchmarks/tools/fuzz_public_ops.py --device cuda --calls 12 --seed 57 -v \
  > $OUT/racecheck_fuzz_v.log 2>&1
echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/racecheck_fuzz_v.log
grep -v "Host Frame\|Saved host" $OUT/racecheck_fuzz_v.log | grep -E "^ok|^FAIL|call|hazard|SUMMARY|decode|prefill" | cut -c1-250 | head -60
