set -u
for w in .whl/fla_core*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/fla "$w"; done
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,power.draw --format=csv > $OUT/r1_gpu.txt 2>&1
PYTHONPATH=$PWD timeout 330 python3 benchmarks/tools/linear_read_floor.py --json $OUT/r1_linear_read_floor.json > $OUT/r1_linear_read_floor.log 2>&1; grep -v "^  " $OUT/r1_linear_read_floor.log | tail -30
PYTHONPATH=$PWD:/tmp/fla timeout 200 python3 benchmarks/tools/prefill_short_prompts.py --sweep > $OUT/r1_prefill_short_sweep.log 2>&1; tail -60 $OUT/r1_prefill_short_sweep.log
