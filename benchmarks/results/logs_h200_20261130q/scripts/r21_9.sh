set -u
export PYTHONUNBUFFERED=1
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w" 2>/dev/null; done
T=benchmarks/tools/prefill_part_layouts.py
# narrower state tiles in the B1 parts (more state CTAs, fewer columns per step), 4 stages as the rule gives
PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site timeout 330 python3 $T --cases B1_T8192,B1_T32768 --layouts "rule;rule@BV=32,num_warps=2;rule@BV=32,num_warps=2,pow2_scale=0;rule@BV=16,num_warps=2,pow2_scale=0" > $OUT/r9_layouts_narrow_parts.log 2>&1; echo rc=$?
grep -h "graph\|False\|Error" $OUT/r9_layouts_narrow_parts.log
