#!/bin/bash
# Fifty-seventh session, main: new seeds (58) for the randomized checks on the GPU, the KDA calls under
# racecheck (kernels filtered to KDA's) and the serving walk under memcheck, then plain runs of the public ops
# (head dims to 256) and the linear. Each tool checks every result (fp64 reference, padding zero, poisoned
# slots untouched); -v prints a line per call, so a run cut by its bound still shows what it checked. ~7 min.
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD
T0=$(date +%s); RUN_S=${RUN_S:-450}
nvidia-smi --query-gpu=name --format=csv > $OUT/gpu.log; cat $OUT/gpu.log
run() {  # name, timeout, sanitizer args ('' for a plain run), command...
  local name=$1 t=$2 san=$3; shift 3
  local left=$(( RUN_S - ($(date +%s) - T0) )); [ $left -lt 20 ] && return; [ $t -gt $left ] && t=$left
  if [ -n "$san" ]; then timeout $t compute-sanitizer $san --error-exitcode 3 "$@" > $OUT/$name.log 2>&1
  else timeout $t "$@" > $OUT/$name.log 2>&1; fi
  echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/$name.log
}
KDA="--kernel-name kns=chunk_ --kernel-name kns=recurrent_kda --kernel-name kns=segment_starts --kernel-name kns=longest_first"
run ops_racecheck 170 "--tool racecheck --racecheck-report all --print-limit 8 $KDA" \
  python3 benchmarks/tools/fuzz_public_ops.py --device cuda --calls 40 --seed 58 --big-dims 0.25 -v
run serving_memcheck 110 "--tool memcheck" \
  python3 benchmarks/tools/fuzz_serving_steps.py --device cuda --engines 6 --steps 20 --seed 58 --verify 0.3 -v
run ops_plain 100 "" python3 benchmarks/tools/fuzz_public_ops.py --device cuda --calls 150 --seed 58 --big-dims 0.25 -v
run linear_plain 60 "" python3 benchmarks/tools/fuzz_linear.py --device cuda --calls 150 --seed 58 -v
for f in $OUT/*.log; do echo "== $f"; grep -h "SUMMARY\|failed\|rc " $f | tail -n 3; done
