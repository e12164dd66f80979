#!/bin/bash
# Prepared in the fifty-third session for the next GPU (its device time was spent): KDABackend.warmup
# compiling on threads (kimiops.launch.compiling_in_background) before its real pass (branch
# parallel-warmup, merged into main untimed). Run from the repository root; nothing to carry. RUN_S
# (default 400) bounds it.
# 1. fresh processes with an empty Triton cache, then with the cache on disk: the warm-up on its default
#    threads and on one, each followed by ten extends of new shapes (first_call_compile.py);
# 2. the GPU tests of the warm-up (on 4 compile threads its real pass compiles nothing; random extends and
#    decodes after it compile nothing) and of the paths the change touches: the launch path, prefill
#    replays, the backend's decode and extend (bound launches, eager shortcut).
export PYTHONUNBUFFERED=1
T0=$(date +%s)
RUN_S=${RUN_S:-400}
left() { echo $(( RUN_S - ($(date +%s) - T0) )); }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $OUT/gpu.log
echo "CPUs: $(nproc)" >> $OUT/gpu.log
PYTHONPATH=$PWD:$PWD/benchmarks timeout 180 python3 benchmarks/tools/first_call_compile.py \
  --cases backend_walk_warm,backend_walk_warm1 > $OUT/first_call_parallel_warmup.log 2>&1
echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/first_call_parallel_warmup.log; cat $OUT/first_call_parallel_warmup.log
PYTHONPATH=$PWD timeout $(left) python3 -m pytest -q -p no:cacheprovider tests/kda/test_warmup.py tests/test_launch.py \
  tests/kda/test_prefill_replay.py tests/kda/test_backend.py > $OUT/pytest_parallel_warmup.log 2>&1
echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/pytest_parallel_warmup.log; tail -n 3 $OUT/pytest_parallel_warmup.log
