set -u
export PYTHONUNBUFFERED=1
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w" 2>/dev/null; done
PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site timeout 150 python3 benchmarks/tools/state_config_stages.py --cases B1_T8192,B4_T4096,B8_T1024 --configs "tf32_s=0;tf32_s=1;tf32_s=1,tf32_v=1;tf32_s=1,tf32_v=1,num_stages=2" > $OUT/r5_tf32_stages.log 2>&1; echo rc=$?
grep -v Warning $OUT/r5_tf32_stages.log
T=benchmarks/tools/prefill_part_layouts.py
PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site timeout 200 python3 $T --cases B1_T8192 --modes g --layouts "rule;rule@tf32_s=1;rule@tf32_s=1,tf32_v=1;rule@tf32_s=1,tf32_v=1,num_stages=3" > $OUT/r5_layouts_tf32.log 2>&1; echo layouts rc=$?
grep -h "graph\|False\|Error" $OUT/r5_layouts_tf32.log
PYTHONPATH=$PWD:/tmp/site timeout 150 python3 benchmarks/tools/state_config_accuracy.py --configs "tf32_s=1;tf32_s=1,tf32_v=1" > $OUT/r5_accuracy_tf32.log 2>&1; echo acc rc=$?
grep -v Warning $OUT/r5_accuracy_tf32.log | grep -v "one part"
