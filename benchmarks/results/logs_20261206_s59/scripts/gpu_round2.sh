#!/bin/bash
# Fifty-ninth session: on an H200 the prefill table on main (h200_table_bounded.sh, RUN_S 330 s), then on
# any card gpu_parts_schedule.sh with the time left. Carry .whl, .exp/zend, .exp/zstart.
export PYTHONUNBUFFERED=1
T0=$(date +%s)
RUN_S=330 bash benchmarks/results/logs_20261206_s57/scripts/h200_table_bounded.sh
LEFT=$(( 580 - ($(date +%s) - T0) ))
timeout $LEFT bash benchmarks/results/logs_20261206_s59/scripts/gpu_parts_schedule.sh
