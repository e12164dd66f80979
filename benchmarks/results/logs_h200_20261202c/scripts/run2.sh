#!/bin/bash
# run 2: the whole test suite on the GPU with no marker filter (tests that take the `device` fixture
# without the gpu marker run on CUDA too), prefill files first, fla-core off the path (gpu_round.sh's rule)
export PYTHONUNBUFFERED=1
export PYTHONPATH=$PWD
s0=$(date +%s)
timeout ${T:-540} python3 -m pytest -v -p no:cacheprovider --durations=25 \
  tests/kda/test_chunk_kernel.py tests/kda/test_dot_operands.py tests/kda/test_ops.py tests/kda/test_backend.py \
  tests/integrations tests/kda tests > $OUT/r2_pytest_all.log 2>&1
echo "rc $? after $(( $(date +%s) - s0 )) s" >> $OUT/r2_pytest_all.log
grep -c PASSED $OUT/r2_pytest_all.log; grep -E "FAILED|ERROR" $OUT/r2_pytest_all.log | head -40; tail -n 40 $OUT/r2_pytest_all.log
