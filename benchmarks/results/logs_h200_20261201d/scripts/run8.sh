#!/usr/bin/env bash
# Run 8: the GPU tests of the decode kernel, the backend, the ops and target verify on the final
# decode kernel (the buffer's row stride a constexpr).
set -uo pipefail
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w"; done
export PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site PYTHONUNBUFFERED=1
timeout 300 python3 -m pytest -v -m gpu tests/kda/test_verify.py tests/kda/test_recurrent_kernel.py \
  tests/kda/test_backend.py tests/kda/test_ops.py tests/kda/test_fla_keywords.py -p no:cacheprovider -rs > $OUT/r8_pytest_gpu.log 2>&1
grep -E "FAILED|ERROR|passed|failed" $OUT/r8_pytest_gpu.log | tail -8
