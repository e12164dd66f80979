set -u
for w in .whl/fla_core*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/fla "$w"; done
for w in .whl/transformers*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w"; done
export PYTHONUNBUFFERED=1
for i in 1 2; do for tree in $PWD/.exp/r15/old $PWD; do timeout 60 python3 .exp/r15/varying_lengths.py $tree; done; done > $OUT/r8_varying_lengths.log 2>&1; cat $OUT/r8_varying_lengths.log
PYTHONPATH=$PWD:/tmp/site timeout 200 python3 -m pytest -q -m gpu tests/kda/test_ops.py tests/kda/test_backend.py tests/kda/test_chunk_kernel.py tests/kda/test_recurrent_kernel.py tests/integrations tests/test_launch.py -p no:cacheprovider > $OUT/r8_pytest_gpu_kda.log 2>&1; tail -3 $OUT/r8_pytest_gpu_kda.log
timeout 40 python3 benchmarks/tools/prefill_host_gpu.py $PWD > $OUT/r8_prefill_host.log 2>&1; cat $OUT/r8_prefill_host.log
PYTHONPATH=$PWD:/tmp/fla timeout 100 python3 benchmarks/bench_kda_decode.py --no-sweep --ns 1 8 64 --out $OUT > $OUT/r8_bench_decode.log 2>&1; tail -8 $OUT/r8_bench_decode.log
