set -u
export PYTHONUNBUFFERED=1
for w in .whl/fla_core*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/fla "$w"; done
PYTHONPATH=$PWD timeout 150 python3 -m pytest -q -m gpu tests/gemm -k gluon -p no:cacheprovider > $OUT/r1_pytest_gluon.log 2>&1; echo rc=$?; tail -3 $OUT/r1_pytest_gluon.log
PYTHONPATH=$PWD timeout 200 python3 benchmarks/bench_linear.py --out $OUT --table-out kimiops/gemm/tables/sm90.json --triton-from kimiops/gemm/tables/sm90.json --workers 16 > $OUT/r1_bench_linear.log 2>&1; echo rc=$?
cp kimiops/gemm/tables/sm90.json $OUT/sm90_table.json
grep "N=.*copies\|geomean" $OUT/r1_bench_linear.log | cut -c1-220
PYTHONPATH=$PWD timeout 200 python3 benchmarks/bench_kda_prefill.py --ablate intra --modes gate,g --rows "default,BK2 32,maxnreg 192,no register cap" --rep 20 > $OUT/r1_ablate_addr.log 2>&1; echo rc=$?; grep ablate $OUT/r1_ablate_addr.log
