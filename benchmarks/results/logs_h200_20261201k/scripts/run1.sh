#!/bin/bash
# run 1: GPU tests of the eager prefill paths (elastic replay in parts and segments), then the
# extend host times with the replay on / off (A/B in one process) for one prompt in parts / segments
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w"; done
export PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $OUT/r1_gpu.txt
timeout 280 python3 -m pytest -q -m gpu tests/kda/test_chunk_kernel.py -k "eager or repeated" > $OUT/r1_pytest_eager_prefill.log 2>&1; echo "rc $?" >> $OUT/r1_pytest_eager_prefill.log
timeout 290 python3 benchmarks/tools/extend_host_gpu.py --cases parts segments4 segments8 1x64-512 --ab 2 --calls 30 > $OUT/r1_extend_host_parts_segments.log 2>&1; echo "rc $?" >> $OUT/r1_extend_host_parts_segments.log
