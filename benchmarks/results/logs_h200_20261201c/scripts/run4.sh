#!/usr/bin/env bash
# Run 4: the segmented prefill's four launches chained by programmatic dependent launch
# (PIPELINE_CONFIG["segment_pdl"]): the segment tests on the device (both marks), then the
# head-dims tool with the chain (default) against segment_pdl=0, same process, at 4, 8 and 16 heads.
set -uo pipefail
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w"; done
export PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site PYTHONUNBUFFERED=1
timeout 200 python3 -m pytest -q -rfE -m "gpu or not gpu" tests/kda/test_chunk_kernel.py \
  -k "segment or acceptance or repeated or graph" -p no:cacheprovider > $OUT/r4_pytest_segments.log 2>&1
echo "pytest rc $?" >> $OUT/r4_pytest_segments.log; tail -4 $OUT/r4_pytest_segments.log
timeout 150 python3 benchmarks/tools/prefill_head_dims.py --dims 128x128 --heads 4 --cases B1_T8192,B2_T8192,B1_T32768 \
  --modes g,gate --configs "|segment_pdl=0" > $OUT/r4_segment_pdl_heads_4.log 2>&1
echo "rc $?" >> $OUT/r4_segment_pdl_heads_4.log; cat $OUT/r4_segment_pdl_heads_4.log
timeout 100 python3 benchmarks/tools/prefill_head_dims.py --dims 128x128 --heads 8 --cases B1_T8192,B2_T8192 \
  --modes g --configs "|segment_pdl=0" > $OUT/r4_segment_pdl_heads_8.log 2>&1
echo "rc $?" >> $OUT/r4_segment_pdl_heads_8.log; cat $OUT/r4_segment_pdl_heads_8.log
