# run 10: the capture paths after the last review's fixes (split-K counters zeroed on the stream that
# first uses them outside a capture; chain counters first made inside a capture zeroed by every later
# capture and the first eager call)
set -u
export PYTHONPATH=$PWD:$PWD/benchmarks PYTHONUNBUFFERED=1
timeout 170 python3 -m pytest -v -m gpu tests/kda/test_chunk_kernel.py tests/gemm/test_linear.py \
  -k "chain_counters or cuda_graph_capture or back_to_back or pipelined_parts or deterministic" > $OUT/r10_pytest_gpu_capture.log 2>&1
echo "exit $?" | tee -a $OUT/r10_pytest_gpu_capture.log
grep -E "FAILED|ERROR|passed|failed" $OUT/r10_pytest_gpu_capture.log | tail -15
