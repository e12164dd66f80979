#!/bin/bash
# run 6: every GPU test of the prefill kernels, the public ops, snapshots, FLA keywords and the engine
# adapters on the elastic replay's code (run 5's -k selected only the eager tests in every file)
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w"; done
export PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site PYTHONUNBUFFERED=1
git log -1 --format=%H > $OUT/commit6.txt 2>/dev/null
timeout 540 python3 -m pytest -q -m gpu -rs tests/kda/test_chunk_kernel.py tests/kda/test_ops.py tests/kda/test_backend.py tests/kda/test_track.py tests/kda/test_fla_keywords.py tests/integrations/test_sglang.py tests/integrations/test_vllm.py > $OUT/r6_pytest_gpu.log 2>&1
tail -8 $OUT/r6_pytest_gpu.log
