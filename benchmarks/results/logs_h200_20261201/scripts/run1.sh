#!/bin/bash
# Run 1: head dims 256 — GPU tests, then the state-config rows at K = V = 256 against FLA.
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w"; done
export PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv > $OUT/r1_nvidia_smi.txt
timeout 200 python3 -m pytest -q -rA -s tests/kda/test_chunk_kernel.py tests/kda/test_recurrent_kernel.py -k "256" \
  > $OUT/r1_pytest_gpu_256.log 2>&1; echo "pytest rc $?" >> $OUT/r1_pytest_gpu_256.log
timeout 330 python3 benchmarks/tools/prefill_head_dims.py --dims 256x256 --heads 16 --cases B1_T8192,B4_T4096 --modes g \
  --configs "num_stages=2;num_stages=3;BV=32,num_warps=4,num_stages=2|parts=1;BV=16,num_warps=4,num_stages=2;BV=16,num_warps=4,num_stages=3;BV=32,num_warps=4,num_stages=3;BV=64,num_warps=8,num_stages=2" \
  > $OUT/r1_head_dims_256.log 2>&1; echo "rc $?" >> $OUT/r1_head_dims_256.log
tail -3 $OUT/r1_pytest_gpu_256.log; cat $OUT/r1_head_dims_256.log
