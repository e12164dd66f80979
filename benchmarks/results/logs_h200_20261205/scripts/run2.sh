#!/bin/bash
# Run 2 (forty-fourth session): every GPU test of test_chunk_kernel.py on the candidate's tree
# (.exp/binv, as run 1), one process (run 1's four concurrent shards each finished ~19 of their ~30
# tests in 270 s: the GPU, not compilation, bounds them).
export PYTHONUNBUFFERED=1
cd .exp/binv
PYTHONPATH=$PWD timeout 560 python3 -m pytest -q -p no:cacheprovider --durations=12 tests/kda/test_chunk_kernel.py \
  > $OUT/r2_pytest_chunk_kernel_binv.log 2>&1
echo "rc $?" >> $OUT/r2_pytest_chunk_kernel_binv.log
tail -n 25 $OUT/r2_pytest_chunk_kernel_binv.log
