#!/bin/bash
# Fifty-fourth session: the GPU test suite on main after the threaded warm-up (branch parallel-warmup) was
# merged, without the four files that gpu_parallel_warmup.sh (cpu_checks_20261206_s53/scripts/) runs
# first on the same machine. Run from the repository root; nothing to carry; ~8 min.
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD
timeout 560 python3 -m pytest -q -p no:cacheprovider --durations=10 tests \
  --ignore=tests/kda/test_warmup.py --ignore=tests/test_launch.py --ignore=tests/kda/test_prefill_replay.py \
  --ignore=tests/kda/test_backend.py > $OUT/pytest_gpu_rest.log 2>&1
echo "rc $?" >> $OUT/pytest_gpu_rest.log; tail -n 4 $OUT/pytest_gpu_rest.log
