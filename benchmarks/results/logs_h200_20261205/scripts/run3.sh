#!/bin/bash
# Run 3 (forty-fourth session): two more alternating A/B rounds, main against the candidate (per-round
# logs kept in r3_round_ab_logs.tgz), then the table on the candidate's tree beside FLA 0.6
# (bench_kda_prefill.py, precomputed g and in-kernel gate).
export PYTHONUNBUFFERED=1
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w"; done
bash benchmarks/tools/prefill_ab_rounds.sh $OUT r3 2 main binv > $OUT/r3_summary.log 2>&1
(cd $OUT && tar czf r3_round_ab_logs.tgz r3_round_ab_*.log && rm r3_round_ab_*.log)
tail -n 9 $OUT/r3_summary.log
mkdir -p $OUT/json
for m in g gate; do
  PYTHONPATH=$PWD/.exp/binv:$PWD/benchmarks:/tmp/site timeout 215 python3 benchmarks/bench_kda_prefill.py --no-sweep \
    --modes $m --out $OUT/json > $OUT/r3_bench_prefill_binv_$m.log 2>&1
  echo "rc $?" >> $OUT/r3_bench_prefill_binv_$m.log
done
(cd $OUT && tar czf r3_bench_json.tgz json && rm -r json)  # unpacked into this folder: kda_prefill_*.json
tail -n 30 $OUT/r3_bench_prefill_binv_*.log
