#!/usr/bin/env bash
# Run 5: one prompt at 1 and 2 heads (tensor parallelism of 16-32 over 32 heads), never measured:
# the rule's default (16 segments) against no segments, 32 and 64 segments; ours and FLA in one process.
set -uo pipefail
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w"; done
export PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site PYTHONUNBUFFERED=1
for h in 2 1; do
  timeout 120 python3 benchmarks/tools/prefill_head_dims.py --dims 128x128 --heads $h --cases B1_T8192,B1_T32768 \
    --modes g --configs "|segments=1;|segments=32;|segments=64" > $OUT/r5_segments_heads_$h.log 2>&1
  echo "rc $?" >> $OUT/r5_segments_heads_$h.log; cat $OUT/r5_segments_heads_$h.log
done
