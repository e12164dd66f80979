#!/bin/bash
# Sixty-eighth session, one round (carry .whl). About 5 minutes on an H200:
#   1. the index study at N = 64 and 128, 3 interleaved rounds, with this session's two placement variants
#      (the index holding 0..N-1 shuffled: the sequential slots' set in a random order; random slots of a
#      pool 8 times larger: the same count spread over 8x the addresses);
#   2. on an H200 only (SKIP_H200_ROUNDS=1 skips it): the sixty-seventh session's gpu_h200_slim.sh without its
#      index study (the prefetch flag's A/B unless SKIP_PREFETCH=1, then main's decode table N = 1, 8, 64
#      against FLA, the tiles-per-program A/B and its GPU tests).
T0=$(date +%s)
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv > $OUT/card.log; cat $OUT/card.log
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD:$PWD/benchmarks
timeout 150 python3 benchmarks/tools/decode_copy_structures.py --index --ns 64 128 --rounds 3 > $OUT/index_cost.log 2>&1
echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/index_cost.log; cat $OUT/index_cost.log
[ "$SKIP_H200_ROUNDS" = 1 ] && exit 0
S=benchmarks/results/logs_20261207_s67/scripts
if [ "$SKIP_PREFETCH" != 1 ]; then
  git apply $S/decode_prefetch_first.patch || echo "prefetch patch failed"
  for c in same cold; do
    F=""; [ $c = cold ] && F="--cold"
    timeout 100 python3 $S/prefetch_sweep.py --ns 64 --per-sm 16 32 --rounds 3 $F > $OUT/prefetch_sweep_$c.log 2>&1
    echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/prefetch_sweep_$c.log; cat $OUT/prefetch_sweep_$c.log
  done
  git checkout -- kimiops benchmarks/bench_kda_decode.py benchmarks/tools/decode_config_ab.py
fi
AB_NS="64" bash benchmarks/results/logs_20261207_s66/scripts/gpu_round3.sh
echo "all done after $(( $(date +%s) - T0 )) s"
