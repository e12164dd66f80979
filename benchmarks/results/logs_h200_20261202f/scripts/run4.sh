#!/bin/bash
# run 4: the working tree as run 2: every GPU test of tests/kda outside the two files of runs 2 and 3
# (marked and `device`), in the 206 s of device time left
mkdir -p $OUT/s4; OUT=$OUT/s4 TEST_MARK= TEST_TIMEOUT=290 TESTS="tests/kda --ignore=tests/kda/test_chunk_kernel.py --ignore=tests/kda/test_dot_operands.py" bash benchmarks/gpu_round.sh tests; cp $OUT/s4/pytest_gpu.log $OUT/r4_pytest_kda_rest.log; rm -r $OUT/s4
