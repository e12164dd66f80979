#!/bin/bash
# Fifty-second session: the randomized checks on a GPU over main after the fifty-first session's varlen
# changes (stage 1's search loop, the request count unspecialized, the sort's block at least 32), which
# they had not run on yet: their pytest cases, then public calls and simulated engines (eager shortcut
# across changing batches, speculative rounds) with new seeds. RUN_S (default 500) bounds the whole run.
export PYTHONUNBUFFERED=1
T0=$(date +%s)
RUN_S=${RUN_S:-500}
left() { echo $(( RUN_S - ($(date +%s) - T0) )); }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $OUT/gpu.log
PYTHONPATH=$PWD timeout 240 python3 -m pytest -q -p no:cacheprovider tests/kda/test_ops.py tests/kda/test_backend.py \
  -k "drawn_together or engine_steps or one_argument_made_wrong or random_calls_match or traced_by_torch_compile" \
  > $OUT/fuzz_pytest.log 2>&1
echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/fuzz_pytest.log; tail -n 3 $OUT/fuzz_pytest.log
PYTHONPATH=$PWD timeout $(( $(left) / 2 )) python3 benchmarks/tools/fuzz_serving_steps.py --device cuda --engines 12 \
  --steps 30 --seed 52 --verify 0.3 -v > $OUT/fuzz_serving_steps_cuda_seed52.log 2>&1
echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/fuzz_serving_steps_cuda_seed52.log
tail -n 3 $OUT/fuzz_serving_steps_cuda_seed52.log
PYTHONPATH=$PWD timeout $(left) python3 benchmarks/tools/fuzz_public_ops.py --device cuda --calls 150 --seed 52 \
  --big-dims 0.25 -v > $OUT/fuzz_public_ops_cuda_seed52.log 2>&1
echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/fuzz_public_ops_cuda_seed52.log
tail -n 3 $OUT/fuzz_public_ops_cuda_seed52.log
echo "total $(( $(date +%s) - T0 )) s"
