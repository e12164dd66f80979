#!/bin/bash
# Run 4 (forty-fourth session): the working tree with the candidate on main (its chunk_intra.py),
# every GPU test of tests/kda outside the files runs 1 and 2 ran (marked and `device`). NOT RUN: the
# device refused three calls for it (no machine could be started), then too little device time was left.
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD
timeout 280 python3 -m pytest -q -p no:cacheprovider tests/kda --ignore=tests/kda/test_chunk_kernel.py \
  --ignore=tests/kda/test_dot_operands.py --ignore=tests/kda/test_diag_block_inverse.py \
  > $OUT/r4_pytest_kda_rest.log 2>&1
echo "rc $?" >> $OUT/r4_pytest_kda_rest.log
tail -n 4 $OUT/r4_pytest_kda_rest.log
