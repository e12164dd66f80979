#!/bin/bash
# The short form of gpu_one_part_pdl_ab.sh for the last minutes of a session's device time: stage 1 and
# the whole call of the varlen case and B8 T1024 with precomputed g (the build whose pass 1 PDL 1
# schedules differently is the varlen one), main and the branch alternating while RUN_S (default 140)
# lasts. Run with exp/one-part-pdl checked out; carry .exp/main (git archive main kimiops).
export PYTHONUNBUFFERED=1
T0=$(date +%s)
RUN_S=${RUN_S:-140}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $OUT/gpu.log
rm -rf .exp/onepdl && mkdir -p .exp/onepdl && cp -r kimiops .exp/onepdl/
for r in 0 1 2; do
  for t in main onepdl; do
    left=$(( RUN_S - ($(date +%s) - T0) )); [ $left -lt 20 ] && break 2
    PYTHONPATH=$PWD/.exp/$t:$PWD/benchmarks timeout $left python3 benchmarks/tools/prefill_round_ab.py --no-accuracy \
      --cases varlen7_16384,B8_T1024 --modes g > $OUT/quick_round_ab_${t}_$r.log 2>&1
    echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/quick_round_ab_${t}_$r.log
  done
done
grep -H "" $OUT/quick_round_ab_*.log | grep -v "^\S*: *$" | tail -40
