#!/usr/bin/env bash
# Run 2 (twenty-fifth session): the other GPU tests (decode kernel, FLA keywords, devices, the
# integrations), whose op schema and call path the snapshot change touched.
set -uo pipefail
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w"; done
export PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site PYTHONUNBUFFERED=1
timeout 500 python3 -m pytest -v -m gpu tests/kda/test_recurrent_kernel.py tests/kda/test_fla_keywords.py \
  tests/kda/test_workspace.py tests/kda/test_gate.py tests/kda/test_reference.py tests/test_devices.py tests/integrations \
  -p no:cacheprovider -rs > $OUT/r2_pytest_gpu.log 2>&1
grep -E "FAILED|ERROR|passed|failed" $OUT/r2_pytest_gpu.log | tail -8
