#!/bin/bash
# run 5: the session's final tree: GPU tests of the public ops (eager decode at new batch sizes, the
# repeated-call shortcuts), the backend, the engine adapters and the eager prefill tests; then eager
# decode at changing batch sizes once more (exact entries keyed by shape, g and beta viewed to their
# own head dims since run 4).
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w"; done
export PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site PYTHONUNBUFFERED=1
timeout 110 python3 -m pytest -q -m gpu -rs tests/kda/test_ops.py tests/kda/test_backend.py tests/integrations/test_sglang.py tests/integrations/test_vllm.py > $OUT/r5_pytest_ops_gpu.log 2>&1
echo "rc $?" >> $OUT/r5_pytest_ops_gpu.log
tail -4 $OUT/r5_pytest_ops_gpu.log
timeout 130 python3 -m pytest -q -m gpu -rs tests/kda/test_chunk_kernel.py -k "eager or repeated" > $OUT/r5_pytest_prefill_eager_gpu.log 2>&1
echo "rc $?" >> $OUT/r5_pytest_prefill_eager_gpu.log
tail -4 $OUT/r5_pytest_prefill_eager_gpu.log
timeout 40 python3 benchmarks/tools/decode_batch_sizes_gpu.py --label "final tree" --no-fla > $OUT/r5_batch_sizes_final.log 2>&1
cat $OUT/r5_batch_sizes_final.log
