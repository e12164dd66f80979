set -u
export PYTHONUNBUFFERED=1
SC=$PWD/.exp/r15/sc
(cd $SC && PYTHONPATH=$SC timeout 220 python3 -m pytest -q -m gpu tests/kda/test_chunk_kernel.py tests/kda/test_ops.py tests/kda/test_backend.py tests/test_launch.py -p no:cacheprovider > $OUT/r2_pytest_gpu_shortcut.log 2>&1); tail -3 $OUT/r2_pytest_gpu_shortcut.log
for i in 1 2; do
timeout 40 python3 benchmarks/tools/prefill_host_gpu.py $PWD > $OUT/r2_prefill_host_main_$i.log 2>&1; cat $OUT/r2_prefill_host_main_$i.log
timeout 40 python3 $SC/benchmarks/tools/prefill_host_gpu.py $SC > $OUT/r2_prefill_host_shortcut_$i.log 2>&1; cat $OUT/r2_prefill_host_shortcut_$i.log
done
