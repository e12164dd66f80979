#!/bin/bash
# Fifty-sixth session: the linear kernels (Gluon cluster and global hand-offs, Triton) under compute-sanitizer's
# memcheck, racecheck and synccheck (benchmarks/tools/linear_sanitize.py checks every result too). ~5 min.
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD
T0=$(date +%s)
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv > $OUT/gpu.log
compute-sanitizer --version > $OUT/sanitizer_version.log 2>&1
python3 benchmarks/tools/linear_sanitize.py > $OUT/plain.log 2>&1   # compiles every variant outside the sanitizer
echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/plain.log
for tool in memcheck racecheck synccheck; do
  extra=""; [ $tool = racecheck ] && extra="--racecheck-report all"
  timeout 150 compute-sanitizer --tool $tool $extra --kernel-name kns=linear_kernel --error-exitcode 3 \
    python3 benchmarks/tools/linear_sanitize.py > $OUT/$tool.log 2>&1
  echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/$tool.log
done
tail -n 4 $OUT/*.log
