#!/bin/bash
# Sixty-ninth session, one round (carry .whl), run on branch exp/slot-order: main of this session with
# decode_slot_order.patch applied (git apply benchmarks/results/logs_20261207_s69/scripts/decode_slot_order.patch).
# About 4-6 minutes; at most 8 files under $OUT:
#   1. the slot order A/B (TileConfig.slot_order, letter o: each program's sequence is the one with the p-th
#      smallest start slot, so a call streams the pool in address order), against the tables' configs at
#      N = 32..256: the cu_seqlens form with the same and with cold slots, with the slots handed over sorted
#      (the flag's sort then costs without reordering anything), then batch mode;
#   2. the recurrent kernel's tests (GPU and interpreter cases);
#   3. the sixty-eighth session's index study at N = 64 and 128 (the bare copy's slot placements);
#   4. main's decode table against FLA at N = 1, 8, 64 (the figures).
T0=$(date +%s)
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD:$PWD/benchmarks
AB=benchmarks/tools/decode_config_ab.py
NS="32 64 128 256"
timeout 120 python3 $AB --ns $NS --rounds 3 --configs 8x1h 8x1ho 8x1 8x1o > $OUT/slot_order_varlen.log 2>&1
echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/slot_order_varlen.log; cat $OUT/slot_order_varlen.log
timeout 120 python3 $AB --cold --ns $NS --rounds 3 --configs 8x1h 8x1ho 8x1 8x1o > $OUT/slot_order_varlen_cold.log 2>&1
echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/slot_order_varlen_cold.log; cat $OUT/slot_order_varlen_cold.log
timeout 90 python3 $AB --sorted --ns 64 128 --rounds 3 --configs 8x1h 8x1ho 8x1 8x1o > $OUT/slot_order_sorted.log 2>&1
echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/slot_order_sorted.log; cat $OUT/slot_order_sorted.log
timeout 120 python3 $AB --batch --ns $NS --rounds 3 --configs 8x1he 8x1heo 8x1e 8x1eo > $OUT/slot_order_batch.log 2>&1
echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/slot_order_batch.log; cat $OUT/slot_order_batch.log
timeout 150 python3 -m pytest -q tests/kda/test_recurrent_kernel.py > $OUT/tests_recurrent.log 2>&1
echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/tests_recurrent.log; tail -3 $OUT/tests_recurrent.log
timeout 90 python3 benchmarks/tools/decode_copy_structures.py --index --ns 64 128 --rounds 3 > $OUT/index_cost.log 2>&1
echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/index_cost.log; cat $OUT/index_cost.log
mkdir -p $OUT/json; python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/fla_core-0.6.0-py3-none-any.whl
PYTHONPATH=$PYTHONPATH:/tmp/site timeout 90 python3 benchmarks/bench_kda_decode.py --out $OUT/json --ns 1 8 64 \
  --no-sweep > $OUT/bench_decode_main.log 2>&1
echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/bench_decode_main.log; cat $OUT/bench_decode_main.log
