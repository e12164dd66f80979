#!/bin/bash
# Fifty-eighth session: on an H200 first the prefill table on main (h200_table_bounded.sh, RUN_S=330),
# then, on any card, compute-sanitizer's initcheck (reads of device memory never written) and synccheck (barrier
# misuse) on the KDA and linear kernels, neither run on them before. The caching allocator is off
# (PYTORCH_NO_CUDA_MEMORY_CACHING=1) so every torch.empty is a fresh cudaMalloc that initcheck tracks, not a
# block some earlier kernel wrote. The tools check every result as well (fp64 reference, padding zero, poisoned
# slots untouched). Carry .whl.
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD
T0=$(date +%s); RUN_S=${RUN_S:-565}
nvidia-smi --query-gpu=name --format=csv,noheader > $OUT/gpu.log; cat $OUT/gpu.log
grep -q H200 $OUT/gpu.log && RUN_S=330 bash benchmarks/results/logs_20261206_s57/scripts/h200_table_bounded.sh
run() {  # name, timeout, sanitizer args, command...
  local name=$1 t=$2 san=$3; shift 3
  local left=$(( RUN_S - ($(date +%s) - T0) )); [ $left -lt 20 ] && return; [ $t -gt $left ] && t=$left
  PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout $t compute-sanitizer $san --print-limit 8 --error-exitcode 3 "$@" \
    >> $OUT/sanitize.log 2>&1
  echo "== $name: rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/sanitize.log
}
KDA="--kernel-name kns=chunk_ --kernel-name kns=recurrent_kda --kernel-name kns=segment_starts --kernel-name kns=longest_first"
LIN="--kernel-name kns=linear_kernel"
run ops_initcheck 150 "--tool initcheck $KDA" \
  python3 benchmarks/tools/fuzz_public_ops.py --device cuda --calls 30 --seed 60 --big-dims 0.25 -v
run serving_initcheck 110 "--tool initcheck $KDA" \
  python3 benchmarks/tools/fuzz_serving_steps.py --device cuda --engines 4 --steps 15 --seed 60 --verify 0.3 -v
run linear_initcheck 60 "--tool initcheck $LIN" python3 benchmarks/tools/linear_sanitize.py
run linear_fuzz_initcheck 60 "--tool initcheck $LIN" python3 benchmarks/tools/fuzz_linear.py --device cuda --calls 60 --seed 60 -v
run ops_synccheck 120 "--tool synccheck $KDA" \
  python3 benchmarks/tools/fuzz_public_ops.py --device cuda --calls 30 --seed 61 --big-dims 0.25 -v
grep -h "SUMMARY\|failed\|== " $OUT/sanitize.log
