#!/bin/bash
# Seventieth session, the slot order flag on an H200 only (carry .whl); stops at once on another card unless
# ANY_CARD=1. About 2 minutes; 5 files under $OUT: gpu_h200.sh's part 1 at N = 64 and 128 (batch mode too), and
# its part 2 (main's decode table against FLA at N = 1, 8, 64, then with the flag in the rows serving N * HV in
# (256, 2048]).
T0=$(date +%s)
CARD=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "$CARD"
[[ "$CARD" == *H200* || "$ANY_CARD" == 1 ]] || { echo "not an H200: stopped"; exit 3; }
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD:$PWD/benchmarks
AB=benchmarks/tools/decode_config_ab.py
log() { echo "rc $1 after $(( $(date +%s) - T0 )) s" >> $2; cat $2; }
git apply benchmarks/results/logs_20261207_s69/scripts/decode_slot_order.patch || { echo "patch failed"; exit 1; }
timeout 80 python3 $AB --ns 64 128 --rounds 3 --configs 8x1h 8x1ho 8x1 8x1o > $OUT/slot_order_varlen.log 2>&1
log $? $OUT/slot_order_varlen.log
timeout 80 python3 $AB --sorted --ns 64 128 --rounds 3 --configs 8x1h 8x1ho 8x1 8x1o > $OUT/slot_order_sorted.log 2>&1
log $? $OUT/slot_order_sorted.log
timeout 80 python3 $AB --batch --ns 64 128 --rounds 3 --configs 8x1he 8x1heo 8x1e 8x1eo > $OUT/slot_order_batch.log 2>&1
log $? $OUT/slot_order_batch.log
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/fla_core-0.6.0-py3-none-any.whl
mkdir -p $OUT/json /tmp/json_o
PYTHONPATH=$PYTHONPATH:/tmp/site timeout 90 python3 benchmarks/bench_kda_decode.py --out $OUT/json --ns 1 8 64 \
  --no-sweep > $OUT/bench_decode.log 2>&1
log $? $OUT/bench_decode.log
sed -i 's/TileConfig(8, 1, stream_hints=True)/TileConfig(8, 1, stream_hints=True, slot_order=True)/; s/TileConfig(8, 1, stream_hints=True, early_inputs=True)/TileConfig(8, 1, stream_hints=True, early_inputs=True, slot_order=True)/' kimiops/kda/kernels/recurrent.py
grep -n "slot_order=True)" kimiops/kda/kernels/recurrent.py >> $OUT/bench_decode.log
PYTHONPATH=$PYTHONPATH:/tmp/site timeout 90 python3 benchmarks/bench_kda_decode.py --out /tmp/json_o --ns 1 8 64 \
  --no-sweep >> $OUT/bench_decode.log 2>&1
log $? $OUT/bench_decode.log
git checkout -- kimiops benchmarks/bench_kda_decode.py benchmarks/tools/decode_config_ab.py tests
echo "all done after $(( $(date +%s) - T0 )) s"
