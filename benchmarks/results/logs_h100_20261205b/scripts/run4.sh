#!/bin/bash
# Run 4 (same warm H100): the randomized checks of cpu_checks_20261205_s46/scripts/gpu_fuzz_round.sh, its
# tool runs first (their own timeouts, 120 + 90 + 60 s, -v: a line per call), then its six test cases
# with 170 s (they passed on the H100 in the forty-eighth session on f49dae0; this is main with sub-blocks of 4).
export PYTHONUNBUFFERED=1; T0=$(date +%s); git log -1 --format=%h > $OUT/tree.log 2>&1
sed -n '/fuzz_public_ops.py/,$p' benchmarks/results/cpu_checks_20261205_s46/scripts/gpu_fuzz_round.sh > /tmp/tools.sh
nvidia-smi --query-gpu=name,driver_version --format=csv > $OUT/fuzz_gpu.log; bash /tmp/tools.sh
PYTHONPATH=$PWD timeout 170 python3 -m pytest -q -p no:cacheprovider tests/kda/test_ops.py tests/kda/test_backend.py \
  tests/gemm/test_linear.py -k "drawn_together or engine_steps or one_argument_made_wrong or random_calls_match or traced_by_torch_compile" \
  > $OUT/fuzz_pytest.log 2>&1
echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/fuzz_pytest.log
