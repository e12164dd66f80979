#!/bin/bash
# Seventieth session, the sixty-seventh session's prefetch flag on an H200 only (no wheels needed); stops at once
# on another card unless ANY_CARD=1. About 1 minute; 2 files under $OUT: prefetch_sweep.py at N = 64 and 128,
# both forms, the table's config against the flag at 16 and 32 programs per SM, same slots then cold slots.
T0=$(date +%s)
CARD=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "$CARD"
[[ "$CARD" == *H200* || "$ANY_CARD" == 1 ]] || { echo "not an H200: stopped"; exit 3; }
S67=benchmarks/results/logs_20261207_s67/scripts
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD:$PWD/benchmarks
git apply $S67/decode_prefetch_first.patch || { echo "prefetch patch failed"; exit 1; }
for c in same cold; do
  F=""; [ $c = cold ] && F="--cold"
  timeout 80 python3 $S67/prefetch_sweep.py --ns 64 128 --per-sm 16 32 --rounds 3 $F > $OUT/prefetch_$c.log 2>&1
  echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/prefetch_$c.log; cat $OUT/prefetch_$c.log
done
git checkout -- kimiops benchmarks/bench_kda_decode.py benchmarks/tools/decode_config_ab.py  # the patch's files
echo "all done after $(( $(date +%s) - T0 )) s"
