#!/bin/bash
# run 1: every GPU test of the prefill paths and the engine adapters on the code changed after the
# thirtieth session's last GPU run (exact-entry suppression, variant learning across N, the module
# split), then the elastic replay on/off side by side for 1, 4 and 8 requests.
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w"; done
export PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site PYTHONUNBUFFERED=1
timeout 300 python3 -m pytest -q -m gpu -rs tests/kda/test_chunk_kernel.py tests/kda/test_ops.py tests/kda/test_backend.py tests/kda/test_track.py tests/kda/test_fla_keywords.py tests/integrations/test_sglang.py tests/integrations/test_vllm.py > $OUT/r1_pytest_gpu.log 2>&1
tail -8 $OUT/r1_pytest_gpu.log
timeout 240 python3 benchmarks/tools/extend_host_gpu.py --ab 2 --ab-only > $OUT/r1_extend_host_ab.log 2>&1
tail -30 $OUT/r1_extend_host_ab.log
