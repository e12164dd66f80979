#!/bin/bash
# Fifty-seventh session: the whole test suite on the GPU on main, in four pytest processes side by side (disjoint
# files; they share the GPU and Triton's cache; the suite is bound by compiling, which the 16 CPUs then share).
# No test times the GPU or reads memory figures of another process. Nothing to carry; ~6 min cold.
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv > $OUT/gpu.log; cat $OUT/gpu.log
K=tests/kda
shard() {  # name, files...
  local name=$1; shift
  timeout 540 python3 -m pytest -q -rs -p no:cacheprovider --durations=5 "$@" > $OUT/pytest_$name.log 2>&1
  echo "rc $?" >> $OUT/pytest_$name.log
}
shard chunk $K/test_chunk_kernel.py &
shard serving $K/test_recurrent_kernel.py $K/test_decode_replay.py $K/test_verify.py $K/test_backend.py \
  $K/test_prefill_replay.py $K/test_warmup.py &
shard kda_rest $K --ignore=$K/test_chunk_kernel.py --ignore=$K/test_recurrent_kernel.py \
  --ignore=$K/test_decode_replay.py --ignore=$K/test_verify.py --ignore=$K/test_backend.py \
  --ignore=$K/test_prefill_replay.py --ignore=$K/test_warmup.py &
shard other tests --ignore=$K &
wait
for f in $OUT/pytest_*.log; do echo "== $f"; grep -E "passed|failed|error|^rc " $f | tail -n 3; done
