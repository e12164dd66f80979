#!/bin/bash
# run 5: the engine adapters' GPU tests on this tree (transformers' prefill is a fixed-length call,
# now an elastic entry; vLLM's a varlen one)
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w"; done
export PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site PYTHONUNBUFFERED=1
timeout 300 python3 -m pytest -q -m gpu tests/integrations/test_transformers.py tests/integrations/test_vllm.py tests/kda/test_ops.py > $OUT/r5_pytest_adapters.log 2>&1; echo "rc $?" >> $OUT/r5_pytest_adapters.log
