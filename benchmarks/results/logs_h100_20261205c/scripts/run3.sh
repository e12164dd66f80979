#!/bin/bash
# Run 3 (same warm H100): the test files run 2's pytest had not finished when its 450 s timeout cut it (it
# had given 483 of 646 results, none failed; 430: a line of its dots miscounted, which only makes the overlap larger): every file holding a test from the 430th on, in collection order.
export PYTHONUNBUFFERED=1
PYTHONPATH=$PWD python3 -m pytest -q -p no:cacheprovider --collect-only tests --ignore=tests/kda/test_chunk_kernel.py \
  2>/dev/null | grep '::' > /tmp/ids
tail -n +430 /tmp/ids | cut -d: -f1 | uniq > /tmp/files
cat /tmp/files | tr '\n' ' ' > $OUT/r3_files.log
PYTHONPATH=$PWD timeout 290 python3 -m pytest -q -p no:cacheprovider $(cat /tmp/files) > $OUT/r3_pytest_rest.log 2>&1
echo "rc $?" >> $OUT/r3_pytest_rest.log
tail -4 $OUT/r3_pytest_rest.log
