#!/bin/bash
# Seventieth session, for an H200 (carry .whl), on main. About 6 minutes; at most 8 files under $OUT:
#   1. the slot order flag (the sixty-ninth session's decode_slot_order.patch, letter o) against the tables'
#      configs: cu_seqlens form with the same slots at N = 32..256, with the slots handed over sorted (the
#      sort's cost alone) at N = 64, 128, and batch mode at N = 32..128 (decode_config_ab.py, best of 3 rounds);
#   2. main's decode table against FLA 0.6 at N = 1, 8, 64, then the same with the flag set in the table rows
#      that serve N * HV in (256, 2048] (the N = 64 row), in one process each;
#   3. the sixty-seventh session's prefetch flag (decode_prefetch_first.patch) at N = 64, same and cold slots.
T0=$(date +%s)
S69=benchmarks/results/logs_20261207_s69/scripts
S67=benchmarks/results/logs_20261207_s67/scripts
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD:$PWD/benchmarks
AB=benchmarks/tools/decode_config_ab.py
log() { echo "rc $1 after $(( $(date +%s) - T0 )) s" >> $2; cat $2; }
git apply $S69/decode_slot_order.patch || { echo "slot order patch failed"; exit 1; }
timeout 110 python3 $AB --ns 32 64 128 256 --rounds 3 --configs 8x1h 8x1ho 8x1 8x1o > $OUT/slot_order_varlen.log 2>&1
log $? $OUT/slot_order_varlen.log
timeout 80 python3 $AB --sorted --ns 64 128 --rounds 3 --configs 8x1h 8x1ho 8x1 8x1o > $OUT/slot_order_sorted.log 2>&1
log $? $OUT/slot_order_sorted.log
timeout 100 python3 $AB --batch --ns 32 64 128 --rounds 3 --configs 8x1he 8x1heo 8x1e 8x1eo > $OUT/slot_order_batch.log 2>&1
log $? $OUT/slot_order_batch.log
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/fla_core-0.6.0-py3-none-any.whl
mkdir -p $OUT/json /tmp/json_o
PYTHONPATH=$PYTHONPATH:/tmp/site timeout 90 python3 benchmarks/bench_kda_decode.py --out $OUT/json --ns 1 8 64 \
  --no-sweep > $OUT/bench_decode.log 2>&1
log $? $OUT/bench_decode.log
# the flag in the rows that serve N * HV in (256, 2048]: both forms' stream_hints rows
sed -i 's/TileConfig(8, 1, stream_hints=True)/TileConfig(8, 1, stream_hints=True, slot_order=True)/; s/TileConfig(8, 1, stream_hints=True, early_inputs=True)/TileConfig(8, 1, stream_hints=True, early_inputs=True, slot_order=True)/' kimiops/kda/kernels/recurrent.py
grep -n "slot_order=True)" kimiops/kda/kernels/recurrent.py >> $OUT/bench_decode.log
PYTHONPATH=$PYTHONPATH:/tmp/site timeout 90 python3 benchmarks/bench_kda_decode.py --out /tmp/json_o --ns 1 8 64 \
  --no-sweep >> $OUT/bench_decode.log 2>&1
log $? $OUT/bench_decode.log
git checkout -- kimiops benchmarks/bench_kda_decode.py benchmarks/tools/decode_config_ab.py tests
git apply $S67/decode_prefetch_first.patch || { echo "prefetch patch failed"; exit 1; }
for c in same cold; do
  F=""; [ $c = cold ] && F="--cold"
  timeout 90 python3 $S67/prefetch_sweep.py --ns 64 --per-sm 16 32 --rounds 3 $F > $OUT/prefetch_$c.log 2>&1
  log $? $OUT/prefetch_$c.log
done
git checkout -- kimiops benchmarks
echo "all done after $(( $(date +%s) - T0 )) s"
