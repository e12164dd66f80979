#!/usr/bin/env bash
# Run 1 (twenty-fifth session): GPU tests of the prefill paths the snapshot change touched (the
# state kernel's launches in one piece, parts and segments; ops, backend, eager replay), then the
# cost of snapshots against the same calls without them.
set -uo pipefail
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w"; done
export PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $OUT/r1_nvidia_smi.txt
timeout 330 python3 -m pytest -v -m gpu tests/kda/test_track.py tests/kda/test_chunk_kernel.py tests/kda/test_ops.py \
  tests/kda/test_prefill_replay.py tests/kda/test_backend.py -p no:cacheprovider -rs > $OUT/r1_pytest_gpu.log 2>&1
grep -E "FAILED|ERROR|passed|failed" $OUT/r1_pytest_gpu.log | tail -8
timeout 220 python3 benchmarks/tools/prefill_track_cost.py --rep 20 --modes g,gate > $OUT/r1_track_cost.log 2>&1
cat $OUT/r1_track_cost.log | tail -12
