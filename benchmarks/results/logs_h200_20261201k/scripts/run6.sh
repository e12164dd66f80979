#!/bin/bash
# run 6: one fixed-length sequence with a new token count every call, elastic replay on / off
export PYTHONPATH=$PWD:$PWD/benchmarks:$PWD/benchmarks/tools PYTHONUNBUFFERED=1
timeout 300 python3 benchmarks/results/logs_h200_20261201k/scripts/fixed_ab.py > $OUT/r6_fixed_ab.log 2>&1; echo "rc $?" >> $OUT/r6_fixed_ab.log
