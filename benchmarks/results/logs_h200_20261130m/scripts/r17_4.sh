set -u
export PYTHONUNBUFFERED=1
PYTHONPATH=$PWD timeout 540 python3 benchmarks/bench_linear.py --out $OUT --table-out kimiops/gemm/tables/sm90.json --triton-from kimiops/gemm/tables/sm90.json --workers 16 > $OUT/r4_bench_linear.log 2>&1; echo rc=$?
cp kimiops/gemm/tables/sm90.json $OUT/sm90_table.json
grep -v "INVALID" $OUT/r4_bench_linear.log | grep "N=\|geomean" | cut -c1-200 | tail -70
