#!/bin/bash
# run 5 (e019ba5's tests): test_fla_keywords.py on the GPU after its oracle moved to the CPU
PYTHONPATH=$PWD timeout 100 python3 -m pytest -q tests/kda/test_fla_keywords.py -p no:cacheprovider > $OUT/r5_pytest_fla_keywords.log 2>&1
echo "rc $?" >> $OUT/r5_pytest_fla_keywords.log; tail -4 $OUT/r5_pytest_fla_keywords.log
