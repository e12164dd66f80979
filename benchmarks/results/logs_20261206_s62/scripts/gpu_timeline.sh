#!/bin/bash
# Sixty-second session, run 2: where a one-prompt call's time goes on the current kernels. The PyTorch
# profiler's kernel timeline of one call (the last of three) for the B1 cells, precomputed g and
# the in-kernel gate, in the launcher's parts and in 8 parts at T8192.
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD
nvidia-smi --query-gpu=name --format=csv > $OUT/card.log
T=benchmarks/tools/prefill_timeline.py
for gate in "" --gate; do
  for len in 8192 32768; do
    python3 $T --seq-len $len $gate > $OUT/timeline_t${len}${gate:+_gate}.log 2>&1
  done
  python3 $T --seq-len 8192 --parts 8 $gate > $OUT/timeline_t8192${gate:+_gate}_8parts.log 2>&1
done
tail -n 25 $OUT/timeline_t8192_gate.log
