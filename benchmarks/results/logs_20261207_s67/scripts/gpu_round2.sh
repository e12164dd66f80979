#!/bin/bash
# Sixty-seventh session, run 2 (about 2 minutes): decode_prefetch_first.patch swept with prefetch_sweep.py, the
# tables' configs against the flag at 16, 20 and 32 programs per SM, both forms, N = 16, 32, 64, 128, same slots
# then cold slots. The patch is reverted at the end.
T0=$(date +%s)
S=benchmarks/results/logs_20261207_s67/scripts
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv > $OUT/card.log; cat $OUT/card.log
git apply $S/decode_prefetch_first.patch || { echo "patch failed"; exit 1; }
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD:$PWD/benchmarks
for c in same cold; do
  F=""; [ $c = cold ] && F="--cold"
  timeout 200 python3 $S/prefetch_sweep.py --ns ${NS:-16 32 64 128} --per-sm 16 20 32 --rounds 3 $F > $OUT/prefetch_sweep_$c.log 2>&1
  echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/prefetch_sweep_$c.log; cat $OUT/prefetch_sweep_$c.log
done
git checkout -- kimiops benchmarks/bench_kda_decode.py benchmarks/tools/decode_config_ab.py
