#!/bin/bash
# Run 5: after SEG=0 is passed to every launch of the state kernel (run 4 failed 10 tests on the fast
# launch path's missing constexpr): those tests again, then ours vs FLA at 4 heads with segment counts.
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w"; done
export PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site
timeout 100 python3 -m pytest -q -rA -m gpu tests/kda/test_chunk_kernel.py -k "head_dims_256 or graph or repeated" \
  > $OUT/r5_pytest_gpu.log 2>&1; echo "pytest rc $?" >> $OUT/r5_pytest_gpu.log
timeout 120 python3 benchmarks/tools/prefill_head_dims.py --dims 128x128 --heads 4 --cases B1_T8192,B1_T32768 --modes g \
  --configs "|segments=1;|segments=16;|segments=64" > $OUT/r5_segments_heads_4.log 2>&1; echo "rc $?" >> $OUT/r5_segments_heads_4.log
grep -E "passed|failed|FAILED" $OUT/r5_pytest_gpu.log | tail -15; cat $OUT/r5_segments_heads_4.log
