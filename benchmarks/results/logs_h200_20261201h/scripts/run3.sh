# run 3: the small-program linear variants of run 1 with the PDL release after the wait (so at most
# the next call's programs sit waiting beside the running call, prefetching), in a patched copy
# (the 28th session's patch_linear_order.py), against the committed order, on three weights
set -u
export PYTHONUNBUFFERED=1
rm -rf /tmp/tree_L && mkdir -p /tmp/tree_L && cp -r kimiops /tmp/tree_L/ && \
  python3 benchmarks/results/logs_h200_20261201g/scripts/patch_linear_order.py /tmp/tree_L/kimiops/gemm
ARGS="--shapes 1024x2048,2624x2048,2048x4096 --ms 1,32 --block-n 16,32 --splits 4,8 --tiles 4x3,4x6"
PYTHONPATH=/tmp/tree_L:$PWD/benchmarks timeout 280 python3 benchmarks/tools/linear_small_programs.py $ARGS 2>&1 | tee $OUT/r3_small_programs_wait_first.log
PYTHONPATH=$PWD:$PWD/benchmarks timeout 280 python3 benchmarks/tools/linear_small_programs.py $ARGS 2>&1 | tee $OUT/r3_small_programs_release_first.log
