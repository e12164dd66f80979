#!/bin/bash
# The forty-sixth session's GPU round (../../cpu_checks_20261205_s46/scripts/gpu_fuzz_round.sh) cut to
# ~5 minutes for the device time left in the forty-seventh session: the randomized tests on CUDA,
# then short -v runs of the public-ops and serving tools. Run from the repository root with $OUT set.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $OUT/fuzz_gpu.log
PYTHONPATH=$PWD timeout 200 python3 -m pytest -q -p no:cacheprovider tests/kda/test_ops.py \
  tests/kda/test_backend.py tests/gemm/test_linear.py \
  -k "drawn_together or engine_steps or one_argument_made_wrong or random_calls_match or traced_by_torch_compile" > $OUT/fuzz_pytest.log 2>&1
echo "rc $?" >> $OUT/fuzz_pytest.log; tail -n 3 $OUT/fuzz_pytest.log
PYTHONPATH=$PWD timeout 60 python3 benchmarks/tools/fuzz_public_ops.py --device cuda --calls 60 --seed 1 \
  --big-dims 0.25 -v > $OUT/fuzz_public_ops_cuda_seed1.log 2>&1
echo "rc $?" >> $OUT/fuzz_public_ops_cuda_seed1.log; tail -n 3 $OUT/fuzz_public_ops_cuda_seed1.log
PYTHONPATH=$PWD timeout 40 python3 benchmarks/tools/fuzz_serving_steps.py --device cuda --engines 4 --steps 20 \
  --seed 10 --verify 0.3 -v > $OUT/fuzz_serving_steps_cuda.log 2>&1
echo "rc $?" >> $OUT/fuzz_serving_steps_cuda.log; tail -n 3 $OUT/fuzz_serving_steps_cuda.log
