# run 3: PDL order (R: release then wait, as committed; W: wait then release) over configs, N = 1..512, both forms
set -u
export PYTHONPATH=$PWD:$PWD/benchmarks PYTHONUNBUFFERED=1
S=benchmarks/results/logs_h200_20261201g/scripts
python3 $S/order_sweep.py 2>&1 | tee -a $OUT/r3_order_sweep.log
