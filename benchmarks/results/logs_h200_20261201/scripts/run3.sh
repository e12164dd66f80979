#!/bin/bash
# Run 3: the shapes at the head counts of tensor-parallel serving (Kimi-Linear's 32 KDA heads
# over TP 2 / 4 / 8 = 16 / 8 / 4 heads per GPU), ours against FLA, K = V = 128.
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w"; done
export PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site
for h in 4 8 16; do
  timeout 150 python3 benchmarks/tools/prefill_head_dims.py --dims 128x128 --heads $h \
    --cases B1_T8192,B1_T32768,B4_T4096,B8_T1024 --modes g --configs "|parts=1" > $OUT/r3_heads_$h.log 2>&1
  echo "rc $?" >> $OUT/r3_heads_$h.log
done
cat $OUT/r3_heads_*.log
