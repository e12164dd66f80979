#!/bin/bash
# Run 1: the shipped code of the twenty-second session (dff41d8) on the GPU: every GPU test of
# tests/kda, then the segment rule's default against segments off at 4 heads (g and gate), and the
# unmeasured edges: 16 heads (9-16 pairs) and prompts of 2048-4096 tokens at 4 heads.
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w"; done
export PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site
nvidia-smi > $OUT/r1_nvidia_smi.txt 2>&1
timeout 280 python3 -m pytest -q -rfE -m gpu tests/kda > $OUT/r1_pytest_gpu_kda.log 2>&1; echo "pytest rc $?" >> $OUT/r1_pytest_gpu_kda.log
tail -5 $OUT/r1_pytest_gpu_kda.log
timeout 150 python3 benchmarks/tools/prefill_head_dims.py --dims 128x128 --heads 4 --cases B1_T8192,B1_T32768 --modes g,gate \
  --configs "|segments=1" > $OUT/r1_segments_heads_4.log 2>&1; echo "rc $?" >> $OUT/r1_segments_heads_4.log
cat $OUT/r1_segments_heads_4.log
timeout 150 python3 benchmarks/tools/prefill_head_dims.py --dims 128x128 --heads 4 --cases B1_T2048,B1_T4096 --modes g \
  --configs "|segments=1;|segments=2;|segments=4;|segments=8" > $OUT/r1_segments_short.log 2>&1; echo "rc $?" >> $OUT/r1_segments_short.log
cat $OUT/r1_segments_short.log
