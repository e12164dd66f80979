#!/bin/bash
# Sixty-first session, run 3: the chunk accuracy tests stalled in run 2 (five shards side by side on an H200: one
# test passed in 520 s, where an H100 took at most 58 s a test). Here the accuracy shard runs beside only the
# rest of test_chunk_kernel.py, with pytest's faulthandler dumping every thread's stack when a test passes 90 s,
# and nvidia-smi sampling the GPU every 15 s. Bounds: ACC_S (accuracy), REST_S (the rest).
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD
nvidia-smi --query-gpu=name --format=csv > $OUT/card.log; git log --oneline -1 > $OUT/rev.log
( while true; do nvidia-smi --query-gpu=timestamp,utilization.gpu,memory.used,clocks.sm,power.draw --format=csv,noheader; sleep 15; done ) > $OUT/smi.log 2>&1 &
SMI=$!
K=tests/kda/test_chunk_kernel.py
timeout ${ACC_S:-240} python3 -m pytest -v -s -p no:cacheprovider --durations=0 -o faulthandler_timeout=90 $K -k accuracy > $OUT/pytest_chunk_accuracy.log 2>&1 &
A=$!
timeout ${REST_S:-400} python3 -m pytest -q -rs -p no:cacheprovider --durations=5 $K -k "not accuracy" > $OUT/pytest_chunk_rest.log 2>&1 &
R=$!
wait $A; echo "rc $?" >> $OUT/pytest_chunk_accuracy.log
wait $R; echo "rc $?" >> $OUT/pytest_chunk_rest.log
kill $SMI
tail -n 40 $OUT/pytest_chunk_accuracy.log; tail -n 5 $OUT/pytest_chunk_rest.log; cat $OUT/smi.log | head -40
