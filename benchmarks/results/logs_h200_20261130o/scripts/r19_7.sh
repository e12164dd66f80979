set -u
export PYTHONUNBUFFERED=1
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w" 2>/dev/null; done
export PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site
timeout 110 python3 -m pytest -q -m gpu tests/kda/test_recurrent_kernel.py tests/test_devices.py -p no:cacheprovider -rs > $OUT/r7_pytest_gpu_decode.log 2>&1; echo rc=$?; tail -3 $OUT/r7_pytest_gpu_decode.log
T=benchmarks/tools/prefill_part_layouts.py
timeout 120 python3 $T --cases B1_T32768,B1_T8192 --layouts "u4@num_stages=4;u6@num_stages=4;u8@num_stages=4" > $OUT/r7_layouts_more.log 2>&1; echo rc=$?
grep -h "graph\|False" $OUT/r7_layouts_more.log
