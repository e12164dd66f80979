#!/bin/bash
# Fifty-seventh session: the prefill table on main, on an H200 only (an H100 exits at once, so a draw
# that gives one costs only the start). Same steps as logs_h100_20261205b/scripts/h200_table.sh: in-kernel gate
# first (its B1 T8192 cell was the lowest, 1.991x), then precomputed g, then the geomean. Carry .whl. ~8 min cold.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv > $OUT/gpu.log
cat $OUT/gpu.log
grep -q H200 $OUT/gpu.log || { echo "not an H200: nothing run"; exit 0; }
bash benchmarks/results/logs_h100_20261205b/scripts/h200_table.sh
