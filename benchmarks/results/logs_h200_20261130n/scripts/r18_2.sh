set -u
export PYTHONUNBUFFERED=1
cp .exp/chunk_intra_main.py kimiops/kda/kernels/chunk_intra.py
PYTHONPATH=$PWD timeout 100 python3 benchmarks/bench_kda_prefill.py --ablate intra --modes gate --rows "default" --rep 20 > $OUT/r2_ablate_main.log 2>&1; echo rc=$?; grep ablate $OUT/r2_ablate_main.log
git checkout kimiops/kda/kernels/chunk_intra.py 2>/dev/null || cp .exp/chunk_intra_addr.py kimiops/kda/kernels/chunk_intra.py
PYTHONPATH=$PWD timeout 100 python3 benchmarks/bench_kda_prefill.py --ablate intra --modes gate --rows "default" --rep 20 > $OUT/r2_ablate_addr.log 2>&1; echo rc=$?; grep ablate $OUT/r2_ablate_addr.log
PYTHONPATH=$PWD:/tmp/site timeout 300 python3 -m pytest -q -m gpu tests/kda/test_chunk_kernel.py tests/kda/test_ops.py -p no:cacheprovider > $OUT/r2_pytest_gpu_chunk.log 2>&1; echo rc=$?; tail -2 $OUT/r2_pytest_gpu_chunk.log
