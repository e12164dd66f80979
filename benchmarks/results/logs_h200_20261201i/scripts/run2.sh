#!/bin/bash
# run 2: run 1's extend timing with a new token count on every call and the host path's pieces
# timed per call; the decode eager call's host pieces (tool fixed for the kernel's current arguments)
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w"; done
export PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site PYTHONUNBUFFERED=1
timeout 300 python3 benchmarks/tools/extend_host_gpu.py --pieces > $OUT/r2_extend_host_pieces.log 2>&1
timeout 120 python3 benchmarks/tools/decode_host_gpu.py > $OUT/r2_decode_host.log 2>&1
cat $OUT/r2_extend_host_pieces.log; cat $OUT/r2_decode_host.log
