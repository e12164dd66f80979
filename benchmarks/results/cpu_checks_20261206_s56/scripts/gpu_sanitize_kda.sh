#!/bin/bash
# Fifty-sixth session: the KDA kernels and the linear under compute-sanitizer, through the randomized tools
# (their own checks run too: fp64 reference, padded rows zero, poisoned pool slots untouched). Each tool runs
# once plainly first, so its kernels compile outside the sanitizer. ~9 min.
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD
T0=$(date +%s)
nvidia-smi --query-gpu=name --format=csv > $OUT/gpu.log
run() {  # name, timeout, sanitizer args ('' for a plain run), command...
  local name=$1 t=$2 san=$3; shift 3
  if [ -n "$san" ]; then timeout $t compute-sanitizer $san --error-exitcode 3 "$@" > $OUT/$name.log 2>&1
  else timeout $t "$@" > $OUT/$name.log 2>&1; fi
  echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/$name.log
}
run ops_plain 120 "" python3 benchmarks/tools/fuzz_public_ops.py --device cuda --calls 30 --seed 56
run ops_memcheck 170 "--tool memcheck" python3 benchmarks/tools/fuzz_public_ops.py --device cuda --calls 30 --seed 56
run ops_racecheck 130 "--tool racecheck --racecheck-report all --kernel-name kns=chunk_ --kernel-name kns=recurrent_kda --kernel-name kns=segment_starts --kernel-name kns=longest_first" \
  python3 benchmarks/tools/fuzz_public_ops.py --device cuda --calls 12 --seed 57
run linear_memcheck 90 "--tool memcheck" python3 benchmarks/tools/fuzz_linear.py --device cuda --calls 40 --seed 56
tail -n 3 $OUT/*.log
