#!/bin/bash
# run 4: GPU tests of eager decode at new batch sizes (KDABackend.decode now views its inputs instead
# of slicing them), the backend's graph test and the engine adapters; then eager decode at changing
# batch sizes and the N = 1 host pieces on this tree and on 5a58502 (carried as .exp/old), alternating.
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w"; done
export PYTHONUNBUFFERED=1
NEW=$PWD:$PWD/benchmarks:/tmp/site
OLD=$PWD/.exp/old:$PWD/benchmarks:/tmp/site
PYTHONPATH=$NEW timeout 230 python3 -m pytest -q -m gpu -rs tests/kda/test_ops.py::test_gpu_eager_decode_with_new_batch_sizes_gives_the_full_path_bits tests/kda/test_backend.py tests/integrations/test_sglang.py tests/integrations/test_vllm.py > $OUT/r4_pytest_gpu.log 2>&1
echo "rc $?" >> $OUT/r4_pytest_gpu.log
tail -8 $OUT/r4_pytest_gpu.log
PYTHONPATH=$NEW timeout 80 python3 benchmarks/tools/decode_batch_sizes_gpu.py --label "this tree, round 1" > $OUT/r4_batch_sizes_new1.log 2>&1
PYTHONPATH=$OLD timeout 50 python3 benchmarks/tools/decode_batch_sizes_gpu.py --label "5a58502, round 1" --no-fla > $OUT/r4_batch_sizes_old1.log 2>&1
PYTHONPATH=$NEW timeout 50 python3 benchmarks/tools/decode_batch_sizes_gpu.py --label "this tree, round 2" --no-fla > $OUT/r4_batch_sizes_new2.log 2>&1
PYTHONPATH=$OLD timeout 50 python3 benchmarks/tools/decode_batch_sizes_gpu.py --label "5a58502, round 2" --no-fla > $OUT/r4_batch_sizes_old2.log 2>&1
PYTHONPATH=$NEW timeout 40 python3 benchmarks/tools/decode_host_gpu.py > $OUT/r4_decode_host_new.log 2>&1
PYTHONPATH=$OLD timeout 40 python3 benchmarks/tools/decode_host_gpu.py > $OUT/r4_decode_host_old.log 2>&1
cat $OUT/r4_batch_sizes_*.log
head -4 $OUT/r4_decode_host_new.log $OUT/r4_decode_host_old.log
