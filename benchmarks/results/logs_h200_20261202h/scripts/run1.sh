#!/bin/bash
# Run 1 (forty-first session): the state stage as one CTA of 8 warps per head (BV 128) in B1's
# pipelined parts, against the default BV 64 with 4 warps (whole calls, graph medians).
set -o pipefail
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD:$PWD/benchmarks
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv > $OUT/r1_gpu.log
L="rule;rule@BV=128,num_warps=8;u8@BV=128,num_warps=8;rule@BV=128,num_warps=8,num_stages=3;u4@BV=128,num_warps=8,split_kv=0;u2@BV=128,num_warps=8"
timeout 420 python3 benchmarks/tools/prefill_part_layouts.py --cases B1_T8192,B1_T32768 --modes g,gate \
  --layouts "$L" --rounds 2 2>&1 | tee $OUT/r1_layouts_bv128.log
