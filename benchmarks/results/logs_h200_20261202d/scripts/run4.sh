#!/bin/bash
# run 4 (the working tree): the GPU tests outside test_chunk_kernel.py / test_dot_operands.py (run 2):
# the gpu-marked tests and those taking the `device` fixture (TEST_MARK= empty), CPU-only tests skip
OUT=$OUT TEST_MARK= TEST_TIMEOUT=540 TESTS="tests --ignore=tests/kda/test_chunk_kernel.py --ignore=tests/kda/test_dot_operands.py --ignore=tests/kda/test_gate.py --ignore=tests/kda/test_recurrent_kernel.py" bash benchmarks/gpu_round.sh tests
mv $OUT/pytest_gpu.log $OUT/r4_pytest_gpu_rest.log
