#!/bin/bash
# run 4 (82d4315): the GPU tests of tests/kda outside the files of run 2 (the gpu-marked tests and those
# taking the `device` fixture: TEST_MARK= empty; CPU-only tests skip on CUDA)
OUT=$OUT TEST_MARK= TEST_TIMEOUT=170 TESTS="tests/kda --ignore=tests/kda/test_chunk_kernel.py --ignore=tests/kda/test_dot_operands.py --ignore=tests/kda/test_gate.py --ignore=tests/kda/test_recurrent_kernel.py" bash benchmarks/gpu_round.sh tests
mv $OUT/pytest_gpu.log $OUT/r4_pytest_gpu_kda_rest.log; tail -3 $OUT/r4_pytest_gpu_kda_rest.log
