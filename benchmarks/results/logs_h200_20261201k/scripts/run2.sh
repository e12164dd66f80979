#!/bin/bash
# run 2 (warm machine, same tree as run 1): the cases run 1's timeout cut (8 heads in segments, and
# one-part batches as a check that they did not change), A/B only; then the adapters' GPU tests and
# every GPU test of the prefill kernel file
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w"; done
export PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site PYTHONUNBUFFERED=1
timeout 200 python3 benchmarks/tools/extend_host_gpu.py --cases segments8 1x64-512 4x32-256 --ab 2 --ab-only --calls 30 > $OUT/r2_extend_host_ab.log 2>&1; echo "rc $?" >> $OUT/r2_extend_host_ab.log
timeout 120 python3 -m pytest -q -m gpu tests/kda/test_ops.py tests/kda/test_backend.py tests/integrations/test_sglang.py tests/integrations/test_vllm.py > $OUT/r2_pytest_adapters.log 2>&1; echo "rc $?" >> $OUT/r2_pytest_adapters.log
timeout 250 python3 -m pytest -q -m gpu tests/kda/test_chunk_kernel.py > $OUT/r2_pytest_chunk_kernel.log 2>&1; echo "rc $?" >> $OUT/r2_pytest_chunk_kernel.log
