set -u
export PYTHONUNBUFFERED=1
PYTHONPATH=$PWD timeout 560 python3 benchmarks/tools/linear_gluon_check.py --json $OUT/r3_gluon_sweep.json > $OUT/r3_gluon_sweep.log 2>&1; echo rc=$?; grep -v "ok$" $OUT/r3_gluon_sweep.log | cut -c1-250 | tail -50
