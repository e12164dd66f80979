#!/bin/bash
# run 2: GPU tests of the decode paths, the public ops, the backend and the engine adapters, then the
# eager prefill tests, on the elastic decode entries and the varlen guard's fixed row strides.
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w"; done
export PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site PYTHONUNBUFFERED=1
timeout 380 python3 -m pytest -q -m gpu -rs tests/kda/test_ops.py tests/kda/test_backend.py tests/kda/test_recurrent_kernel.py tests/kda/test_fla_keywords.py tests/kda/test_verify.py tests/integrations > $OUT/r2_pytest_decode_gpu.log 2>&1
echo "rc $?" >> $OUT/r2_pytest_decode_gpu.log
tail -6 $OUT/r2_pytest_decode_gpu.log
timeout 180 python3 -m pytest -q -m gpu -rs tests/kda/test_chunk_kernel.py -k "eager or repeated" > $OUT/r2_pytest_prefill_eager_gpu.log 2>&1
echo "rc $?" >> $OUT/r2_pytest_prefill_eager_gpu.log
tail -6 $OUT/r2_pytest_prefill_eager_gpu.log
