#!/bin/bash
# Sixty-seventh session, a shorter round for an H200 (carry .whl; about 4 minutes): the index study at N = 64 (3
# rounds), the prefetch flag's A/B at N = 64 (same slots then cold), then the sixty-sixth session's gpu_round3.sh
# at AB_NS = 64 (main's decode table N = 1, 8, 64 against FLA, the tiles-per-program A/B and its GPU tests).
T0=$(date +%s)
S=benchmarks/results/logs_20261207_s67/scripts
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv > $OUT/card.log; cat $OUT/card.log
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD:$PWD/benchmarks
timeout 100 python3 benchmarks/tools/decode_copy_structures.py --index --ns 64 --rounds 3 > $OUT/index_cost.log 2>&1
echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/index_cost.log; cat $OUT/index_cost.log
git apply $S/decode_prefetch_first.patch || echo "prefetch patch failed"
for c in same cold; do
  F=""; [ $c = cold ] && F="--cold"
  timeout 100 python3 $S/prefetch_sweep.py --ns 64 --per-sm 16 32 --rounds 3 $F > $OUT/prefetch_sweep_$c.log 2>&1
  echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/prefetch_sweep_$c.log; cat $OUT/prefetch_sweep_$c.log
done
git checkout -- kimiops benchmarks/bench_kda_decode.py benchmarks/tools/decode_config_ab.py
AB_NS="64" bash benchmarks/results/logs_20261207_s66/scripts/gpu_round3.sh
echo "all done after $(( $(date +%s) - T0 )) s"
