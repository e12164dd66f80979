#!/bin/bash
# Run 3: segments for batches and one prompt at 8 and 16 heads (forced counts; the rule then).
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w"; done
export PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site
timeout 200 python3 benchmarks/tools/prefill_head_dims.py --dims 128x128 --heads 8 --cases B4_T4096,B2_T8192,B8_T1024 \
  --modes g --configs "|segments=1;|segments=8;|segments=16;|segments=32" > $OUT/r3_batches_heads_8.log 2>&1
echo "rc $?" >> $OUT/r3_batches_heads_8.log; cat $OUT/r3_batches_heads_8.log
timeout 200 python3 benchmarks/tools/prefill_head_dims.py --dims 128x128 --heads 16 --cases B1_T8192,B2_T8192,B1_T32768 \
  --modes g --configs "|segments=1;|segments=8;|segments=16" > $OUT/r3_heads_16.log 2>&1
echo "rc $?" >> $OUT/r3_heads_16.log; cat $OUT/r3_heads_16.log
