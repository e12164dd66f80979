#!/bin/bash
# Fifty-third session: KDABackend.warmup compiling on threads (branch parallel-warmup).
# 1. the warm-up's tests (the GPU one: on 4 compile threads its real pass compiles nothing, and random
#    extends and decodes after it compile nothing);
# 2. fresh processes with an empty Triton cache, then with the cache on disk: the warm-up on its default
#    threads and on one, each followed by ten extends of new shapes.
# Run from the repository root; nothing to carry. RUN_S (default 200) bounds the whole run.
export PYTHONUNBUFFERED=1
T0=$(date +%s)
RUN_S=${RUN_S:-200}
left() { echo $(( RUN_S - ($(date +%s) - T0) )); }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $OUT/gpu.log
nproc >> $OUT/gpu.log
PYTHONPATH=$PWD timeout 60 python3 -m pytest -q -p no:cacheprovider tests/kda/test_warmup.py \
  > $OUT/pytest_parallel_warmup.log 2>&1
echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/pytest_parallel_warmup.log; tail -n 2 $OUT/pytest_parallel_warmup.log
PYTHONPATH=$PWD:$PWD/benchmarks timeout $(left) python3 benchmarks/tools/first_call_compile.py \
  --cases backend_walk_warm,backend_walk_warm1 > $OUT/first_call_parallel_warmup.log 2>&1
echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/first_call_parallel_warmup.log; cat $OUT/first_call_parallel_warmup.log
