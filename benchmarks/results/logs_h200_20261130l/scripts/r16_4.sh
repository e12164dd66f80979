set -u
export PYTHONUNBUFFERED=1
PYTHONPATH=$PWD timeout 420 python3 benchmarks/tools/linear_read_floor.py --json $OUT/r4_linear_read_floor_modes.json > $OUT/r4_linear_read_floor_modes.log 2>&1; grep -v "^  " $OUT/r4_linear_read_floor_modes.log | cut -c1-300 | tail -32
