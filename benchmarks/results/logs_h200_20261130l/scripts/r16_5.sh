set -u
export PYTHONUNBUFFERED=1
PYTHONPATH=$PWD timeout 400 python3 benchmarks/bench_linear.py --shapes 1024x2048,1024x6144,2624x2048,2048x4096 --tiles 4x6,8x4,4x2,4x3 --split-limit 4 --workers 16 --out $OUT/small --table-out $OUT/small/sm90_table.json > $OUT/r5_bench_linear_small_wide.log 2>&1; grep -v INVALID $OUT/r5_bench_linear_small_wide.log | tail -30
