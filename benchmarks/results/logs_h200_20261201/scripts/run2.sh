#!/bin/bash
# Run 2: GPU prefill tests on the head-dims change; head dims 256 with the in-kernel gate, K=128 V=256,
# one more K = 256 tile (BV 32, 8 warps); the K = 128 B1 cell against FLA as a regression check.
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w"; done
export PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site
timeout 260 python3 -m pytest -q -m gpu tests/kda/test_chunk_kernel.py tests/kda/test_ops.py tests/kda/test_backend.py \
  > $OUT/r2_pytest_gpu_prefill.log 2>&1; echo "pytest rc $?" >> $OUT/r2_pytest_gpu_prefill.log
timeout 200 python3 benchmarks/tools/prefill_head_dims.py --dims 256x256,128x256 --heads 16 --cases B1_T8192,B4_T4096 \
  --modes g,gate --configs "BV=32,num_warps=8" > $OUT/r2_head_dims.log 2>&1; echo "rc $?" >> $OUT/r2_head_dims.log
timeout 100 python3 benchmarks/bench_kda_prefill.py --no-sweep --cases B1_T8192,B4_T4096 --modes g --rep 20 --out $OUT \
  > $OUT/r2_bench_prefill_k128.log 2>&1; echo "rc $?" >> $OUT/r2_bench_prefill_k128.log
tail -3 $OUT/r2_pytest_gpu_prefill.log; cat $OUT/r2_head_dims.log; tail -5 $OUT/r2_bench_prefill_k128.log
