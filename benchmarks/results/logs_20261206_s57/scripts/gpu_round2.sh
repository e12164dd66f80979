#!/bin/bash
# Fifty-seventh session, main: on an H200 the prefill table (h200_probe_table.sh); on any other card the
# fifty-sixth session's decode check on main's final, inline form of o's rounding at head dims <= 32 (run 17 of
# that session ran a helper-function form): racecheck on the calls that showed the hazards and on 40 random
# public calls, then the decode kernel's GPU tests. Carry .whl.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv > $OUT/gpu.log
cat $OUT/gpu.log
if grep -q H200 $OUT/gpu.log; then
  bash benchmarks/results/logs_h100_20261205b/scripts/h200_table.sh
else
  bash benchmarks/results/cpu_checks_20261206_s56/scripts/gpu_decode_o_round.sh
fi
