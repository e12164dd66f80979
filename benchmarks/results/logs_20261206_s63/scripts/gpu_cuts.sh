#!/bin/bash
# Sixty-third session, run 2: (1) one prompt's parts cut unevenly, larger first (the run-1 timeline: a
# part's stage 1 runs at full speed only in part 0, the last state part alone at 1.28 us a step, so
# the model T ~ 1.81 us x 256 chunks - 0.44 n_first + 1.28 n_last favours a larger first part and a
# smaller last one while each part's state (~1.7 us a step beside stage 1) still fits under the next
# part's stage 1); graph medians, rounds alternated, bits compared with one part. (2) The host pieces
# of an eager decode call at N = 1 on this host (the last breakdown predates the 14th session).
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD:$PWD/benchmarks
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv > $OUT/card.log
T=benchmarks/tools/prefill_part_layouts.py
python3 $T --cases B1_T8192 --modes gate,g --rounds 4 \
  --layouts "rule;70,66,62,58||;76,68,60,52||;80,68,58,50||;u5;58,54,50,48,46||" > $OUT/cuts_t8192.log 2>&1
python3 benchmarks/tools/decode_host_gpu.py > $OUT/decode_host.log 2>&1
python3 $T --cases B1_T32768 --modes gate,g --rounds 3 \
  --layouts "rule;150,140,132,128,124,120,116,114||;140,136,132,128,124,124,120,120||" > $OUT/cuts_t32768.log 2>&1
grep graph $OUT/cuts_*.log; tail -n 30 $OUT/decode_host.log
