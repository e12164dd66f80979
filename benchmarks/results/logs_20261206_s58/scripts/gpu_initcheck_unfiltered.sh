#!/bin/bash
# Fifty-eighth session, run 3: compute-sanitizer's initcheck with no --kernel-name filter. Run 2 filtered the
# kernels to ours, and initcheck does not track stores of kernels it does not instrument, so memory that torch's
# kernels wrote (torch.full pools, torch.zeros counters, torch.where states) read as uninitialized there. Here
# every kernel is instrumented and the caching allocator is off (each tensor a fresh cudaMalloc), on small
# workloads: the linear's paths (linear_sanitize.py), random public KDA calls with the Triton backend alone, and a
# short serving walk. Each tool still checks its results.
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD PYTORCH_NO_CUDA_MEMORY_CACHING=1
T0=$(date +%s); RUN_S=${RUN_S:-330}
nvidia-smi --query-gpu=name --format=csv,noheader > $OUT/gpu.log; cat $OUT/gpu.log
run() {  # name, timeout, command...
  local name=$1 t=$2; shift 2
  local left=$(( RUN_S - ($(date +%s) - T0) )); [ $left -lt 20 ] && return; [ $t -gt $left ] && t=$left
  timeout $t compute-sanitizer --tool initcheck --print-limit 12 --error-exitcode 3 "$@" > $OUT/$name.log 2>&1
  echo "== $name: rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/$name.log
}
run linear 100 python3 benchmarks/tools/linear_sanitize.py
run ops 130 python3 benchmarks/tools/fuzz_public_ops.py --device cuda --calls 12 --seed 60 --backends triton -v
run serving 100 python3 benchmarks/tools/fuzz_serving_steps.py --device cuda --engines 1 --steps 8 --seed 60 -v
for f in $OUT/linear.log $OUT/ops.log $OUT/serving.log; do grep -h "ERROR SUMMARY\|calls,\|failed\|== \| at .*\.py:" $f | sort | uniq -c; done
