#!/bin/bash
# Sixty-ninth session, for an H200 (carry .whl), on main. About 7 minutes; 7 files under $OUT:
#   1. the sixty-eighth session's index study at N = 64 and 128 (where the bare copy's slots lie);
#   2. what an engine gains by handing over its slots sorted: decode_config_ab.py, same slots, random and sorted,
#      N = 64 and 128, the cu_seqlens form's 8x1h and 8x1;
#   3. main's decode table against FLA 0.6 at N = 1, 8, 64 (issue 4's figures);
#   4. the tiles-per-program A/B still owed to the H200 (the sixty-fifth session's gpu_round1.sh with
#      BENCH_RUNS=0: both forms at N = 32..512 and the path's GPU tests), with decode_sliced_v3.patch, the
#      sixty-fifth session's v2 rebased on this main (its hunks in decode_compile_stats.py and
#      decode_copy_structures.py dropped: the A/B does not use them), passed to gpu_round1.sh as PATCH.
T0=$(date +%s)
S=benchmarks/results/logs_20261207_s69/scripts
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD:$PWD/benchmarks
timeout 90 python3 benchmarks/tools/decode_copy_structures.py --index --ns 64 128 --rounds 3 > $OUT/index_cost.log 2>&1
echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/index_cost.log; cat $OUT/index_cost.log
for sorted in "" --sorted; do
  timeout 60 python3 benchmarks/tools/decode_config_ab.py $sorted --ns 64 128 --rounds 3 --configs 8x1h 8x1 \
    >> $OUT/sorted_ab.log 2>&1
  echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/sorted_ab.log
done
cat $OUT/sorted_ab.log
mkdir -p $OUT/json; python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/fla_core-0.6.0-py3-none-any.whl
PYTHONPATH=$PYTHONPATH:/tmp/site timeout 90 python3 benchmarks/bench_kda_decode.py --out $OUT/json --ns 1 8 64 \
  --no-sweep > $OUT/bench_decode_main.log 2>&1
echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/bench_decode_main.log; cat $OUT/bench_decode_main.log
[ "$SKIP_SLICED" = 1 ] && exit 0  # parts 1-3 only (about 2.5 minutes)
PATCH=$S/decode_sliced_v3.patch BENCH_RUNS=0 bash benchmarks/results/logs_20261207_s65/scripts/gpu_round1.sh
rm -f $OUT/card.log  # gpu_round1.sh's; the logs above name the card
echo "all done after $(( $(date +%s) - T0 )) s"
