#!/bin/bash
# Run 4: the final code. Launch configs of segment_starts_kernel (4 heads, B1 T8192, 16 and 32
# segments), then every GPU test of tests/kda and the device tests of segments (fp32 batch cases).
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w"; done
export PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site
timeout 150 python3 benchmarks/tools/segment_starts_configs.py --heads 4 --cases B1_T8192 --segments 16,32 \
  --configs "prec=ieee;num_stages=3;num_stages=1;num_warps=4;num_warps=16;BV=32;BV=32,num_warps=4;prec=tf32" \
  > $OUT/r4_segment_starts_configs.log 2>&1; echo "rc $?" >> $OUT/r4_segment_starts_configs.log
cat $OUT/r4_segment_starts_configs.log
timeout 280 python3 -m pytest -q -rfE -m gpu tests/kda > $OUT/r4_pytest_gpu_kda.log 2>&1
echo "pytest rc $?" >> $OUT/r4_pytest_gpu_kda.log; tail -4 $OUT/r4_pytest_gpu_kda.log
timeout 90 python3 -m pytest -q -rfE -m "not gpu" tests/kda/test_chunk_kernel.py -k segment > $OUT/r4_pytest_segments_device.log 2>&1
echo "pytest rc $?" >> $OUT/r4_pytest_segments_device.log; tail -4 $OUT/r4_pytest_segments_device.log
