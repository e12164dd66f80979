set -u
export PYTHONUNBUFFERED=1
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w" 2>/dev/null; done
T=benchmarks/tools/prefill_part_layouts.py
# 32-63 (sequence, head) pairs, where the launcher still cuts parts: one prompt at 48 heads, two and three at 16
PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site timeout 200 python3 $T --heads 48 --cases B1_T8192 --layouts "rule;u1" > $OUT/r6_layouts_48_heads.log 2>&1; echo rc=$?
PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site timeout 250 python3 $T --heads 16 --cases B2_T4096,B3_T4096,B1_T8192 --layouts "rule;u1" > $OUT/r6_layouts_16_heads.log 2>&1; echo rc=$?
grep -h "graph\|parts \[\|Error" $OUT/r6_layouts_*.log
