#!/bin/bash
# Run 5: the start-state kernel with the map in column blocks (K = 256), segments under a slow decay
# (the maps carry weight) in bf16 at K = 128 and 256, every segment test on the device, then K = 256
# segments timed at 4 heads.
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w"; done
export PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site
timeout 150 python3 -m pytest -q -rA -m "gpu or not gpu" tests/kda/test_chunk_kernel.py -k "segment" \
  > $OUT/r5_pytest_segments.log 2>&1; echo "pytest rc $?" >> $OUT/r5_pytest_segments.log
grep -E "slow decay|passed|failed|FAILED" $OUT/r5_pytest_segments.log | tail -8
timeout 150 python3 benchmarks/tools/prefill_head_dims.py --dims 256x256 --heads 4 --cases B1_T8192 --modes g \
  --configs "|segments=1;|segments=8;|segments=16" > $OUT/r5_segments_k256.log 2>&1; echo "rc $?" >> $OUT/r5_segments_k256.log
cat $OUT/r5_segments_k256.log
