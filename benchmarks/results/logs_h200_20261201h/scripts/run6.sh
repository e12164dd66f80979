# run 6: the remaining GPU tests (prefill kernels, snapshots, replay, workspace, launch, devices) on the
# audit fixes (run_kda's early return for calls without tokens sits in front of every KDA kernel)
set -u
export PYTHONPATH=$PWD:$PWD/benchmarks PYTHONUNBUFFERED=1
timeout 570 python3 -m pytest -v -m gpu --durations=10 tests/kda/test_chunk_kernel.py tests/kda/test_track.py \
  tests/kda/test_prefill_replay.py tests/kda/test_workspace.py tests/kda/test_gate.py tests/kda/test_reference.py \
  tests/test_launch.py tests/test_devices.py tests/test_bench.py tests/test_cli.py > $OUT/r6_pytest_gpu_rest.log 2>&1
echo "exit $?" | tee -a $OUT/r6_pytest_gpu_rest.log
grep -E "FAILED|ERROR|passed|failed" $OUT/r6_pytest_gpu_rest.log | tail -15
