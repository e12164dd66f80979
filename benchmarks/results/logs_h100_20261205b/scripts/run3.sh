#!/bin/bash
# Run 3 (same warm H100): run 2's pytest reached 118 of test_chunk_kernel.py's 121 tests (all passed) when
# its timeout cut it; this runs test_diag_block_inverse.py and test_chunk_kernel.py's tests from the 115th on.
export PYTHONUNBUFFERED=1; T0=$(date +%s)
PYTHONPATH=$PWD python3 -m pytest -q -p no:cacheprovider --collect-only tests/kda/test_chunk_kernel.py 2>/dev/null \
  | grep '::' > /tmp/ids
wc -l < /tmp/ids > $OUT/n_ids.log; tail -n +115 /tmp/ids > /tmp/rest
PYTHONPATH=$PWD timeout 420 python3 -m pytest -q -p no:cacheprovider tests/kda/test_diag_block_inverse.py $(cat /tmp/rest) \
  > $OUT/pytest_rest.log 2>&1
echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/pytest_rest.log
