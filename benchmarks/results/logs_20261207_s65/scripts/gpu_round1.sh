#!/bin/bash
# Sixty-fifth session, run 1 (carry .whl), about 6 minutes on an H200 with the defaults. decode_sliced_v2.patch: the
# sixty-fourth session's tiles-per-program decode path (batch mode), extended to the cu_seqlens form of as many
# tokens as sequences (a sequence of another length walks its tiles through the token loop). Then
#   1. decode_config_ab.py, both forms: the tables' config at N * HV in (256, 2048] against 16 tiles per program
#      at 2-3 stages and 8 at 3, N = 32..512, 3 rounds interleaved;
#   2. the path's GPU tests (bits against one tile per program at the benchmark's shape, both forms) and the
#      tables' configs;
#   3. tables_16s3.patch (both tables' rows above N*HV = 256 at 16 tiles per program, 3 stages) and the issue-4
#      decode table twice at N = 64, 128, 512 (ours vs FLA 0.6 in one process).
# Smaller rounds set AB_NS, AB_BATCH, AB_VARLEN, TEST_K, BENCH_RUNS and BENCH_NS (gpu_round1_lean.sh, _min.sh);
# PATCH names another version of the path's patch (the sixty-ninth session's rebase, decode_sliced_v3.patch).
T0=$(date +%s)
S=benchmarks/results/logs_20261207_s65/scripts
AB_NS=${AB_NS:-32 64 128 512}
AB_BATCH=${AB_BATCH:-8x1he 8x1he:16s3 8x1he:16s2 8x1he:8s3}
AB_VARLEN=${AB_VARLEN:-8x1h 8x1h:16s3 8x1h:16s2 8x1h:8s3}
TEST_K=${TEST_K:-tiles_per_program or every_table_config}
BENCH_RUNS=${BENCH_RUNS:-2}
BENCH_NS=${BENCH_NS:-64 128 512}
git apply ${PATCH:-$S/decode_sliced_v2.patch} || { echo "patch failed"; exit 1; }
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv > $OUT/card.log; cat $OUT/card.log
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD
ab() {  # $1: log name, then the tool's form flags and configs
  local log=$OUT/$1; shift
  timeout 130 python3 benchmarks/tools/decode_config_ab.py --rounds 3 --ns $AB_NS "$@" > $log 2>&1
  echo "rc $? after $(( $(date +%s) - T0 )) s" >> $log
  cat $log
}
ab ab_varlen.log --configs $AB_VARLEN
ab ab_batch.log --batch --configs $AB_BATCH
timeout 100 python3 -m pytest -q -m gpu tests/kda/test_recurrent_kernel.py -k "$TEST_K" > $OUT/pytest_recurrent_gpu.log 2>&1
echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/pytest_recurrent_gpu.log
tail -n 5 $OUT/pytest_recurrent_gpu.log
[ "$BENCH_RUNS" -gt 0 ] || exit 0
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/fla_core-0.6.0-py3-none-any.whl
git apply $S/tables_16s3.patch || { echo "table patch failed"; exit 1; }
export PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site
for i in $(seq 1 $BENCH_RUNS); do  # only the first run's JSON comes back (at most 8 files do)
  J=$OUT/json; [ $i -gt 1 ] && J=/tmp/json$i; mkdir -p $J
  timeout 90 python3 benchmarks/bench_kda_decode.py --out $J --ns $BENCH_NS --no-sweep > $OUT/bench_decode_$i.log 2>&1
  echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/bench_decode_$i.log
  tail -n 8 $OUT/bench_decode_$i.log
done
