#!/bin/bash
# Sixty-fifth session, run 1 (carry .whl): the sixty-fourth session's round (decode_sliced.patch applied: A/B of
# 16 / 8 tiles per program in batch mode against 8x1he at N = 32..512, the path's GPU tests, the copy
# structures), then batch_table_16s3.patch (the batch table's rows above N*HV = 256 take 16 tiles per program at
# 3 stages) and the issue-4 decode table twice at N = 64, 128, 512 (ours vs FLA 0.6 in one process).
T0=$(date +%s)
S=benchmarks/results
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/fla_core-0.6.0-py3-none-any.whl
bash $S/logs_20261207_s64/scripts/gpu_sliced_round.sh > $OUT/round.log 2>&1
git apply $S/logs_20261207_s65/scripts/batch_table_16s3.patch || patch -p1 < $S/logs_20261207_s65/scripts/batch_table_16s3.patch
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site
for i in 1 2; do  # the second run's JSON stays behind (at most 8 files come back)
  J=$OUT/json; [ $i = 2 ] && J=/tmp/json2; mkdir -p $J
  timeout 90 python3 benchmarks/bench_kda_decode.py --out $J --ns 64 128 512 --no-sweep > $OUT/bench_decode_$i.log 2>&1
  echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/bench_decode_$i.log
done
grep -v "^{" $OUT/round.log | head -n 80; tail -n 14 $OUT/bench_decode_*.log
