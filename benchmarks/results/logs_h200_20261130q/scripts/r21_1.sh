set -u
export PYTHONUNBUFFERED=1
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w" 2>/dev/null; done
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv > $OUT/r1_gpu.txt
PYTHONPATH=$PWD:/tmp/site timeout 220 python3 -m pytest -q -s -m gpu tests/kda/test_chunk_kernel.py -k "pair or accuracy_acceptance" > $OUT/r1_pytest_pair.log 2>&1; echo pytest rc=$?
tail -3 $OUT/r1_pytest_pair.log; grep "pair steps:" $OUT/r1_pytest_pair.log
T=benchmarks/tools/prefill_part_layouts.py
PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site timeout 340 python3 $T --cases B1_T8192,B1_T32768,B4_T4096,B8_T1024,varlen7_16384 --modes g,gate --layouts "rule;rule@pair_steps=1" > $OUT/r1_layouts_pair.log 2>&1; echo layouts rc=$?
grep -h "graph\|rel diff\|Error" $OUT/r1_layouts_pair.log
