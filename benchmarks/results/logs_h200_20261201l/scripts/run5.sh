#!/bin/bash
# run 5: stage 1's register cap 168 against 144 (and 128 for the anchored lower-bound variant),
# bits compared, graph medians of stage 1 and the call (scripts/regcap_ab.py)
export PYTHONPATH=$PWD:$PWD/benchmarks PYTHONUNBUFFERED=1
timeout 270 python3 benchmarks/results/logs_h200_20261201l/scripts/regcap_ab.py > $OUT/r5_regcap_ab.log 2>&1; echo "rc $?" >> $OUT/r5_regcap_ab.log
