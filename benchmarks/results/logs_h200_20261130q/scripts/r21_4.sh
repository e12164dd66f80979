set -u
export PYTHONUNBUFFERED=1
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w" 2>/dev/null; done
PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site timeout 150 python3 benchmarks/tools/state_config_stages.py --cases B1_T8192,B4_T4096,B8_T1024 --configs "split_kv=1;split_kv=0;split_kv=0,hi_first=0" > $OUT/r4_split_kv_stages.log 2>&1; echo rc=$?
grep -v Warning $OUT/r4_split_kv_stages.log
T=benchmarks/tools/prefill_part_layouts.py
PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site timeout 200 python3 $T --cases B1_T8192,B1_T32768 --modes g,gate --layouts "rule;rule@split_kv=0" > $OUT/r4_layouts_split_kv.log 2>&1; echo layouts rc=$?
grep -h "graph\|False\|Error" $OUT/r4_layouts_split_kv.log
PYTHONPATH=$PWD:/tmp/site timeout 200 python3 benchmarks/tools/state_config_accuracy.py --configs "split_kv=1;split_kv=0" > $OUT/r4_accuracy_split_kv.log 2>&1; echo acc rc=$?
grep -v Warning $OUT/r4_accuracy_split_kv.log
