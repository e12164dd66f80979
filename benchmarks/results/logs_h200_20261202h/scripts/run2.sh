#!/bin/bash
# Run 2 (forty-first session): batched cells in pipelined parts (the slot cut: whole sequences per
# part, so each state part has few tiles and shares SMs with the next part's stage 1), against one
# part; and split_kv off in B1's parts with the default tile.
set -o pipefail
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD:$PWD/benchmarks
timeout 250 python3 benchmarks/tools/prefill_part_layouts.py --cases B8_T1024,B4_T4096 --modes g,gate \
  --layouts "rule;u2;u4;u8;u4@num_stages=3" --rounds 2 2>&1 | tee $OUT/r2_layouts_batches.log
timeout 150 python3 benchmarks/tools/prefill_part_layouts.py --cases varlen7_16384 --modes g \
  --layouts "rule;u2;u4;u7" --rounds 2 2>&1 | tee $OUT/r2_layouts_varlen.log
timeout 150 python3 benchmarks/tools/prefill_part_layouts.py --cases B1_T8192 --modes g,gate \
  --layouts "rule;rule@split_kv=0" --rounds 3 2>&1 | tee $OUT/r2_layouts_split_kv.log
