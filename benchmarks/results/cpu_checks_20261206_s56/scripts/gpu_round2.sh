#!/bin/bash
# Fifty-sixth session, run 2, on branch exp/cluster-spread2 (carry .exp/main = git archive main kimiops, and .whl).
# On an H200 (the card): the committed linear table verified with main's code and the branch's, twice,
# alternating; the Triton split counts on the card; then, with the time left, the prefill table on main
# beside FLA 0.6 (the branch changes only the linear). On an H100: the linear A/B only, three rounds.
export PYTHONUNBUFFERED=1
T0=$(date +%s)
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv > $OUT/gpu.log
H200=0; grep -q H200 $OUT/gpu.log && H200=1
rounds=2; [ $H200 = 0 ] && rounds=3
for r in $(seq 1 $rounds); do
  for tree in main spread; do
    if [ $tree = main ]; then P=$PWD/.exp/main:$PWD; else P=$PWD; fi
    mkdir -p $OUT/json_${tree}_$r
    PYTHONPATH=$P timeout 110 python3 benchmarks/bench_linear.py --out $OUT/json_${tree}_$r \
      --verify kimiops/gemm/tables/sm90.json > $OUT/verify_${tree}_$r.log 2>&1
    echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/verify_${tree}_$r.log
  done
done
if [ $H200 = 1 ]; then
  PYTHONPATH=$PWD/.exp/main:$PWD timeout 150 python3 benchmarks/tools/linear_triton_splits.py > $OUT/linear_triton_splits.log 2>&1
  echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/linear_triton_splits.log
  python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/fla_core-0.6.0-py3-none-any.whl
  mkdir -p $OUT/json_prefill
  for m in gate g; do
    left=$(( 585 - ($(date +%s) - T0) )); [ $left -lt 60 ] && break
    PYTHONPATH=$PWD/.exp/main:$PWD:$PWD/benchmarks:/tmp/site timeout $left python3 benchmarks/bench_kda_prefill.py \
      --no-sweep --modes $m --out $OUT/json_prefill > $OUT/bench_prefill_$m.log 2>&1
    echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/bench_prefill_$m.log
  done
  python3 benchmarks/tools/prefill_table_geomean.py $OUT/json_prefill/kda_prefill_*.json > $OUT/table_geomeans.log 2>&1
fi
grep -h "geomean" $OUT/*.log | tail -n 20
