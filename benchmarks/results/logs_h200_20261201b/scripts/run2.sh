#!/bin/bash
# Run 2: segments for batches. GPU tests of the chunk kernels that touch segments (the CPU tests of
# fixed-length and varlen batches run here in fp32, the bf16 varlen pool in 8 segments), then where
# the segmented call's time goes (per kernel), then ours vs FLA at 4 heads for batches.
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w"; done
export PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site
timeout 220 python3 -m pytest -q -rfE -m "gpu or not gpu" tests/kda/test_chunk_kernel.py \
  -k "segment or varlen_pool_bf16 or acceptance or repeated or graph" > $OUT/r2_pytest_segments.log 2>&1
echo "pytest rc $?" >> $OUT/r2_pytest_segments.log; tail -4 $OUT/r2_pytest_segments.log
timeout 90 python3 benchmarks/tools/segment_stages.py --heads 4 --cases B1_T8192,B4_T4096 --segments 1,8,16,32 \
  > $OUT/r2_segment_stages.log 2>&1; echo "rc $?" >> $OUT/r2_segment_stages.log; cat $OUT/r2_segment_stages.log
timeout 200 python3 benchmarks/tools/prefill_head_dims.py --dims 128x128 --heads 4 --cases B4_T4096,B2_T8192,B8_T1024,B1_T4096 \
  --modes g --configs "|segments=1;|segments=8;|segments=16;|segments=32" > $OUT/r2_batches_heads_4.log 2>&1
echo "rc $?" >> $OUT/r2_batches_heads_4.log; cat $OUT/r2_batches_heads_4.log
