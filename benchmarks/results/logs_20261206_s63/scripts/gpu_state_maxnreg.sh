#!/bin/bash
# Sixty-third session, run 4 (scripts/state_maxnreg.patch applied: the state stage's launch takes a maxnreg
# override): one prompt's parts with the state CTA capped at 176 / 168 registers (offline sm_90: 204 /
# 252 B of spills; uncapped 254 registers), so that a fourth stage-1 program (2 warps x 168) fits
# beside it on its SM (run 1's timeline: the overlapped parts are set by stage 1's share of the
# register file, 600 of 792 program slots). 232 (no spills, still three beside) as a control.
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD:$PWD/benchmarks
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv > $OUT/card.log
T=benchmarks/tools/prefill_part_layouts.py
python3 $T --cases B1_T8192 --modes gate,g --rounds 4 \
  --layouts "rule;rule@maxnreg=176;rule@maxnreg=168;rule@maxnreg=232" > $OUT/maxnreg_t8192.log 2>&1
python3 $T --cases B1_T32768 --modes gate --rounds 3 \
  --layouts "rule;rule@maxnreg=176;rule@maxnreg=232" > $OUT/maxnreg_t32768.log 2>&1
grep -h "graph\|bit-equal" $OUT/maxnreg_*.log
