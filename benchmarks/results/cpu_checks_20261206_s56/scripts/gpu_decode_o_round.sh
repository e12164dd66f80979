#!/bin/bash
# Fifty-sixth session, branch exp/decode-o-round (o's products rounded before the reduction at head dims <= 32):
# the calls that showed racecheck hazards, under racecheck again; then the decode kernel's GPU tests.
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD
S=benchmarks/results/cpu_checks_20261206_s56/scripts
T0=$(date +%s)
timeout 100 compute-sanitizer --tool racecheck --racecheck-report all --print-limit 4 --kernel-name kns=recurrent_kda \
  python3 $S/decode_race_call1.py > $OUT/racecheck_calls.log 2>&1; echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/racecheck_calls.log
timeout 100 compute-sanitizer --tool racecheck --racecheck-report all --print-limit 4 --kernel-name kns=recurrent_kda \
  python3 benchmarks/tools/fuzz_public_ops.py --device cuda --calls 40 --seed 57 > $OUT/racecheck_fuzz.log 2>&1
echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/racecheck_fuzz.log
left=$(( 400 - ($(date +%s) - T0) ))
timeout $left python3 -m pytest -q -x tests/kda/test_recurrent_kernel.py tests/kda/test_decode_replay.py tests/kda/test_verify.py \
  > $OUT/pytest_decode.log 2>&1; echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/pytest_decode.log
grep -h "@@\|SUMMARY\|rc \|calls, seed" $OUT/racecheck_*.log; tail -n 3 $OUT/pytest_decode.log
