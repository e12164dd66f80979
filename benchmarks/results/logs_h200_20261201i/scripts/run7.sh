#!/bin/bash
# run 7: extend host time with new token counts, the elastic replay on and off in one process (alternating)
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w"; done
export PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site PYTHONUNBUFFERED=1
git log -1 --format=%H > $OUT/commit7.txt 2>/dev/null
timeout 300 python3 benchmarks/tools/extend_host_gpu.py --ab 2 > $OUT/r7_extend_host_ab.log 2>&1
cat $OUT/r7_extend_host_ab.log
