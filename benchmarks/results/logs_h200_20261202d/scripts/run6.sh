#!/bin/bash
# run 6 (e019ba5): the GPU tests outside tests/kda, as far as 85 s (the device time left) reach
OUT=$OUT TEST_MARK= TEST_TIMEOUT=85 TESTS="tests --ignore=tests/kda -v" bash benchmarks/gpu_round.sh tests
mv $OUT/pytest_gpu.log $OUT/r6_pytest_gpu_outside_kda.log; rm -f $OUT/raw.tgz
