#!/bin/bash
# run 4: the kept launches of the previous call's counts on / off (memo_ab.py), one process per case set
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w"; done
export PYTHONPATH=$PWD:$PWD/benchmarks:$PWD/benchmarks/tools:/tmp/site PYTHONUNBUFFERED=1
timeout 250 python3 benchmarks/results/logs_h200_20261201k/scripts/memo_ab.py 1x64-512 parts segments4 > $OUT/r4_memo_ab.log 2>&1; echo "rc $?" >> $OUT/r4_memo_ab.log
