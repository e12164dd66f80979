#!/bin/bash
# run 1: host time of eager extend calls with changing token counts (the serving case), and the
# decode eager call's host pieces
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w"; done
export PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site PYTHONUNBUFFERED=1
nvidia-smi > $OUT/nvidia_smi.txt 2>&1
git log -1 --format=%H > $OUT/commit.txt 2>/dev/null
timeout 300 python3 benchmarks/tools/extend_host_gpu.py --profile > $OUT/r1_extend_host.log 2>&1
timeout 120 python3 benchmarks/tools/decode_host_gpu.py > $OUT/r1_decode_host.log 2>&1
tail -5 $OUT/r1_decode_host.log
grep -v "^ " $OUT/r1_extend_host.log | head -20
