set -u
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv > $OUT/r1_gpu.txt
PYTHONPATH=$PWD timeout 420 python3 benchmarks/tools/linear_gluon_check.py > $OUT/r1_gluon_check.log 2>&1; echo rc=$?; grep -v "ok$" $OUT/r1_gluon_check.log | tail -30
