#!/bin/bash
# Run 4: segmented state walk. GPU tests that take it (acceptance at H = 4, head dims 256, eager
# shortcut, graphs), then ours vs FLA at 4 / 8 / 16 / 32 heads with forced segment counts.
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w"; done
export PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site
timeout 170 python3 -m pytest -q -rA -s -m gpu tests/kda/test_chunk_kernel.py -k "accuracy or segment or repeated or graph" \
  > $OUT/r4_pytest_gpu_segments.log 2>&1; echo "pytest rc $?" >> $OUT/r4_pytest_gpu_segments.log
for h in 4 8 16; do
  timeout 90 python3 benchmarks/tools/prefill_head_dims.py --dims 128x128 --heads $h --cases B1_T8192,B1_T32768 --modes g \
    --configs "|segments=1;|segments=8;|segments=16;|segments=32;|segments=64" > $OUT/r4_segments_heads_$h.log 2>&1
  echo "rc $?" >> $OUT/r4_segments_heads_$h.log
done
timeout 60 python3 benchmarks/tools/prefill_head_dims.py --dims 128x128 --heads 32 --cases B1_T8192 --modes g \
  --configs "|segments=4;|segments=8;|segments=16" > $OUT/r4_segments_heads_32.log 2>&1; echo "rc $?" >> $OUT/r4_segments_heads_32.log
grep -E "rel o|passed|failed|FAILED|Error" $OUT/r4_pytest_gpu_segments.log | tail -30; cat $OUT/r4_segments_heads_*.log
