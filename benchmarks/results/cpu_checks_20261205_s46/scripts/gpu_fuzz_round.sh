#!/bin/bash
# Prepared in the forty-sixth session (no GPU was lent): the randomized checks on the H200.
# 1. their tests on CUDA: 16 public KDA calls (bf16 inputs, bf16 decode pools, head dims up to 256),
#    400 bad calls, 4 simulated engines x 30 steps per backend (through the eager shortcut), 30 linear
#    calls (bf16, row order and batch invariance), 5 calls traced by torch.compile against eager;
# 2. longer runs of the tools with -v (a line per call as it ends, so a run cut by its timeout still
#    shows what it checked). Most of the time is Triton compiling the calls' specializations.
# Run from the repository root with $OUT set (the device tool's run); ~10 minutes at most.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $OUT/fuzz_gpu.log
PYTHONPATH=$PWD timeout 300 python3 -m pytest -q -p no:cacheprovider tests/kda/test_ops.py \
  tests/kda/test_backend.py tests/gemm/test_linear.py \
  -k "drawn_together or engine_steps or one_argument_made_wrong or random_calls_match or traced_by_torch_compile" > $OUT/fuzz_pytest.log 2>&1
echo "rc $?" >> $OUT/fuzz_pytest.log; tail -n 3 $OUT/fuzz_pytest.log
PYTHONPATH=$PWD timeout 120 python3 benchmarks/tools/fuzz_public_ops.py --device cuda --calls 150 --seed 1 \
  --big-dims 0.25 -v > $OUT/fuzz_public_ops_cuda_seed1.log 2>&1
echo "rc $?" >> $OUT/fuzz_public_ops_cuda_seed1.log; tail -n 3 $OUT/fuzz_public_ops_cuda_seed1.log
PYTHONPATH=$PWD timeout 90 python3 benchmarks/tools/fuzz_serving_steps.py --device cuda --engines 12 --steps 30 \
  --seed 10 --verify 0.3 -v > $OUT/fuzz_serving_steps_cuda.log 2>&1
echo "rc $?" >> $OUT/fuzz_serving_steps_cuda.log; tail -n 3 $OUT/fuzz_serving_steps_cuda.log
PYTHONPATH=$PWD timeout 60 python3 benchmarks/tools/fuzz_linear.py --device cuda --calls 120 --seed 1 -v \
  > $OUT/fuzz_linear_cuda.log 2>&1
echo "rc $?" >> $OUT/fuzz_linear_cuda.log; tail -n 3 $OUT/fuzz_linear_cuda.log
