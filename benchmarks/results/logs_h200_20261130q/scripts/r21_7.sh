set -u
export PYTHONUNBUFFERED=1
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w" 2>/dev/null; done
PYTHONPATH=$PWD:/tmp/site timeout 330 python3 -m pytest -q -m gpu tests/kda/test_chunk_kernel.py tests/kda/test_ops.py tests/kda/test_backend.py tests/test_launch.py tests/kda/test_prefill_replay.py > $OUT/r7_pytest_gpu_prefill.log 2>&1; echo pytest rc=$?
tail -3 $OUT/r7_pytest_gpu_prefill.log
T=benchmarks/tools/prefill_part_layouts.py
PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site timeout 150 python3 $T --heads 16 --cases B2_T4096,B3_T4096 --layouts "rule;u4" > $OUT/r7_layouts_16_heads.log 2>&1; echo rc=$?
grep -h "graph\|parts \[\|Error" $OUT/r7_layouts_16_heads.log
