#!/bin/bash
# The change undone in place (CALL_COUNTS empty, kernel_rows returning T), then the CPU tests of the launch key
# and the replays; the file is restored afterwards. Expect failures: the tests see the change.
f=kimiops/kda/kernels/chunk_layout.py
cp $f /tmp/chunk_layout_keep.py
sed -i 's/^CALL_COUNTS = (.*/CALL_COUNTS = ()/; s/    return 0 if varlen else T/    return T/' $f
TRITON_INTERPRET=1 python3 -m pytest -q -p no:cacheprovider tests/kda/test_prefill_replay.py tests/test_launch.py 2>&1 | tail -8
cp /tmp/chunk_layout_keep.py $f
git diff --stat -- $f
