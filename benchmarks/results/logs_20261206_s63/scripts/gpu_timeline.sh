#!/bin/bash
# Sixty-second session, run 2: where a one-prompt call's time goes on the current kernels. The PyTorch
# profiler's kernel timeline of one call (the last of three) for the B1 cells, precomputed g and
# the in-kernel gate: T8192 in the launcher's 4 parts first, then 8 parts, then T32768 (each log is
# complete when written, so a call stopped by its bound keeps the cases before).
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD
nvidia-smi --query-gpu=name --format=csv > $OUT/card.log
T=benchmarks/tools/prefill_timeline.py
python3 $T --seq-len 8192 --gate > $OUT/timeline_t8192_gate.log 2>&1
python3 $T --seq-len 8192 > $OUT/timeline_t8192.log 2>&1
python3 $T --seq-len 8192 --gate --parts 8 > $OUT/timeline_t8192_gate_8parts.log 2>&1
python3 $T --seq-len 32768 --gate > $OUT/timeline_t32768_gate.log 2>&1
python3 $T --seq-len 32768 > $OUT/timeline_t32768.log 2>&1
tail -n 25 $OUT/timeline_t8192_gate.log
