set -u
export PYTHONUNBUFFERED=1
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w" 2>/dev/null; done
CF="l2_prefetch=0;l2_prefetch=2;l2_prefetch=4;l2_prefetch=8;num_stages=2,l2_prefetch=4;num_stages=4,l2_prefetch=0;num_stages=4,l2_prefetch=4"
PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site timeout 250 python3 benchmarks/tools/state_config_stages.py --cases B1_T8192,B4_T4096,B8_T1024 --configs "$CF" > $OUT/r3_prefetch_stages.log 2>&1; echo rc=$?
grep -v Warning $OUT/r3_prefetch_stages.log
T=benchmarks/tools/prefill_part_layouts.py
PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site timeout 250 python3 $T --cases B1_T8192,B1_T32768 --modes g --layouts "rule;rule@l2_prefetch=2;rule@l2_prefetch=4;rule@l2_prefetch=8" > $OUT/r3_layouts_prefetch.log 2>&1; echo layouts rc=$?
grep -h "graph\|False\|Error" $OUT/r3_layouts_prefetch.log
