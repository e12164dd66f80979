#!/bin/bash
# Prepared in the fifty-second session (no device time left to run it): KDABackend.warmup on a GPU.
# 1. its tests (the GPU one: after the warm-up, random extends and decodes of 1-40 requests add no
#    compiled kernel to any KDA kernel's Triton cache; the pool keeps its bits);
# 2. a fresh process with an empty Triton cache, then with the cache on disk: ten extends of new shapes
#    through KDABackend.extend, without and with the warm-up first (its time in the last column).
# Run from the repository root on main; nothing to carry. RUN_S (default 300) bounds the whole run.
export PYTHONUNBUFFERED=1
T0=$(date +%s)
RUN_S=${RUN_S:-300}
left() { echo $(( RUN_S - ($(date +%s) - T0) )); }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $OUT/gpu.log
PYTHONPATH=$PWD timeout $(( $(left) / 2 )) python3 -m pytest -q -p no:cacheprovider tests/kda/test_warmup.py \
  > $OUT/pytest_warmup.log 2>&1
echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/pytest_warmup.log; tail -n 3 $OUT/pytest_warmup.log
PYTHONPATH=$PWD:$PWD/benchmarks timeout $(left) python3 benchmarks/tools/first_call_compile.py \
  --cases backend_walk,backend_walk_warm > $OUT/first_call_warmup.log 2>&1
echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/first_call_warmup.log; cat $OUT/first_call_warmup.log
