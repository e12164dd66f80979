#!/usr/bin/env bash
# Run 6: B1 T16384 at 1 and 2 heads, the rule's 16 segments against 32 (the length between run 5's).
set -uo pipefail
export PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site PYTHONUNBUFFERED=1
for h in 1 2; do
  timeout 55 python3 benchmarks/tools/prefill_head_dims.py --dims 128x128 --heads $h --cases B1_T16384 \
    --modes g --configs "|segments=32" > $OUT/r6_segments_t16384_heads_$h.log 2>&1
  echo "rc $?" >> $OUT/r6_segments_t16384_heads_$h.log; cat $OUT/r6_segments_t16384_heads_$h.log
done
