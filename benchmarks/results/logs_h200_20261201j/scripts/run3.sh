#!/bin/bash
# run 3: the new eager decode test (its varlen case built its token counts with a CUDA generator on
# the CPU in run 2) and the GPU tests run 2 did not reach, then eager decode at changing batch sizes
# on this tree (with FLA) and on the thirtieth session's final tree (5a58502, carried as .exp/old).
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w"; done
export PYTHONUNBUFFERED=1
NEW=$PWD:$PWD/benchmarks:/tmp/site
OLD=$PWD/.exp/old:$PWD/benchmarks:/tmp/site
PYTHONPATH=$NEW timeout 200 python3 -m pytest -q -m gpu -rs tests/kda/test_ops.py::test_gpu_eager_decode_with_new_batch_sizes_gives_the_full_path_bits tests/integrations/test_transformers.py::test_gpu_trained_model_bf16_greedy_tokens_identical_to_fp32 tests/integrations/test_vllm.py > $OUT/r3_pytest_gpu.log 2>&1
echo "rc $?" >> $OUT/r3_pytest_gpu.log
tail -12 $OUT/r3_pytest_gpu.log
PYTHONPATH=$NEW timeout 150 python3 benchmarks/tools/decode_batch_sizes_gpu.py --label "this tree" > $OUT/r3_decode_batch_sizes_new.log 2>&1
PYTHONPATH=$OLD timeout 90 python3 benchmarks/tools/decode_batch_sizes_gpu.py --label "5a58502" --no-fla > $OUT/r3_decode_batch_sizes_old.log 2>&1
PYTHONPATH=$NEW timeout 70 python3 benchmarks/tools/decode_batch_sizes_gpu.py --label "this tree, again" --no-fla > $OUT/r3_decode_batch_sizes_new2.log 2>&1
cat $OUT/r3_decode_batch_sizes_new.log $OUT/r3_decode_batch_sizes_old.log $OUT/r3_decode_batch_sizes_new2.log
