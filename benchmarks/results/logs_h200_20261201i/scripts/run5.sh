#!/bin/bash
# run 5: GPU tests of the eager prefill paths (elastic replay included), the backend, the public ops and
# the engine adapters; then extend host time with new token counts (no timers)
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w"; done
export PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site:$PWD/.exp PYTHONUNBUFFERED=1
git log -1 --format=%H > $OUT/commit5.txt 2>/dev/null
timeout 420 python3 -m pytest -q -m gpu tests/kda/test_chunk_kernel.py -k "eager or repeated or fast_launch or graph" tests/kda/test_backend.py tests/kda/test_ops.py tests/integrations/test_sglang.py tests/integrations/test_vllm.py > $OUT/r5_pytest_gpu.log 2>&1
tail -5 $OUT/r5_pytest_gpu.log
timeout 150 python3 benchmarks/tools/extend_host_gpu.py > $OUT/r5_extend_host.log 2>&1
cat $OUT/r5_extend_host.log
