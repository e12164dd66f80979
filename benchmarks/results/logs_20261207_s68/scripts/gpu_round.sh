#!/bin/bash
# Sixty-eighth session, one round (carry .whl). About 4 minutes on an H200:
#   1. the index study at N = 64 and 128, 3 interleaved rounds, with this session's two placement variants
#      (the index holding 0..N-1 shuffled: the sequential slots' set in a random order; random slots of a
#      pool 8 times larger: the same count spread over 8x the addresses);
#   2. on an H200 only (SKIP_H200_ROUNDS=1 skips it): the sixty-sixth session's gpu_round3.sh at N = 64 (main's
#      decode table N = 1, 8, 64 against FLA, the tiles-per-program A/B and its GPU tests). The sixty-seventh
#      session's prefetch A/B is left to its own gpu_h200_slim.sh.
T0=$(date +%s)
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv > $OUT/card.log; cat $OUT/card.log
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD:$PWD/benchmarks
timeout 150 python3 benchmarks/tools/decode_copy_structures.py --index --ns 64 128 --rounds 3 > $OUT/index_cost.log 2>&1
echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/index_cost.log; cat $OUT/index_cost.log
[ "$SKIP_H200_ROUNDS" = 1 ] && exit 0
AB_NS="64" bash benchmarks/results/logs_20261207_s66/scripts/gpu_round3.sh
echo "all done after $(( $(date +%s) - T0 )) s"
