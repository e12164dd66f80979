set -u
export PYTHONUNBUFFERED=1
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w" 2>/dev/null; done
T=benchmarks/tools/prefill_part_layouts.py
C=B2_T4096,B3_T4096,varlen2_8192,varlen2_uneven,varlen3_12288
PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site timeout 200 python3 $T --cases $C --modes gate --layouts "rule;u4" > $OUT/r2_layouts_gate.log 2>&1; echo layouts rc=$?
grep -h "graph\|False" $OUT/r2_layouts_gate.log
export PYTHONPATH=$PWD:/tmp/site
timeout 200 python3 -m pytest -q -m gpu tests/kda/test_chunk_kernel.py tests/kda/test_ops.py tests/kda/test_backend.py tests/test_launch.py -p no:cacheprovider -rs > $OUT/r2_pytest_gpu_prefill.log 2>&1; echo rc=$?; tail -4 $OUT/r2_pytest_gpu_prefill.log
timeout 180 python3 -m pytest -q -m gpu tests/gemm -p no:cacheprovider -x > $OUT/r2_pytest_gpu_gemm.log 2>&1; echo rc=$?; tail -4 $OUT/r2_pytest_gpu_gemm.log
