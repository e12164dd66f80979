#!/bin/bash
# Prepared in the fifty-first session (no device lent then): stage 1's sequence search as a loop on its
# range (no LOG_N constexpr), the sort's N unspecialized and its block at least 32, on a GPU. Carry .whl,
# .exp/s50 (git archive 9daec9b kimiops: the tree before this session) and .exp/before (git archive
# 7ee207b kimiops: before the fiftieth session's call counts). RUN_S (default 570) bounds the whole run.
# 1. A/B of stage 1 and the whole call, main against s50, three alternating rounds: the varlen
#    case, 64 sequences of 128 tokens (the deepest search), B1 T8192 and B8 T1024 (fixed length: the same
#    SASS, controls), precomputed g and the softplus gate.
# 2. The GPU tests of varlen prefill, the eager shortcut, the replays, the fast launch path and graphs.
# 3. Cold start of a fresh server's first ten extends (first_call_compile.py's extend_walk) and of the
#    issue's varlen case, per tree (each process compiles into its own empty Triton cache).
export PYTHONUNBUFFERED=1
T0=$(date +%s)
RUN_S=${RUN_S:-570}
left() { echo $(( RUN_S - ($(date +%s) - T0) )); }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $OUT/gpu.log
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/fla_core-0.6.0-py3-none-any.whl
AB_ARGS="--cases varlen7_16384,varlen64_128,B1_T8192,B8_T1024 --modes g,gate" \
  bash benchmarks/tools/prefill_ab_rounds.sh $OUT ab 3 main s50 > $OUT/ab_summary.log 2>&1
echo "A/B done after $(( $(date +%s) - T0 )) s"
(cd $OUT && tar czf ab_round_ab_logs.tgz ab_round_ab_*.log && rm ab_round_ab_*.log)
tail -8 $OUT/ab_summary.log
PYTHONPATH=$PWD timeout $(( $(left) - 150 )) python3 -m pytest -q -p no:cacheprovider tests/kda/test_prefill_replay.py \
  tests/test_launch.py tests/kda/test_chunk_kernel.py \
  -k "varlen or eager or replay or fast_launch or cuda_graph or parts or segments or key or order" \
  > $OUT/pytest_search.log 2>&1
echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/pytest_search.log
tail -n 4 $OUT/pytest_search.log
for tree in before s50 main; do
  [ $(left) -lt 30 ] && break
  root=$PWD; [ $tree != main ] && root=$PWD/.exp/$tree
  PYTHONPATH=$root:$PWD/benchmarks timeout $(left) python3 benchmarks/tools/first_call_compile.py \
    --cases extend_walk,prefill_g_varlen7 > $OUT/first_call_compile_$tree.log 2>&1
  echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/first_call_compile_$tree.log
  tail -n 4 $OUT/first_call_compile_$tree.log
done
echo "total $(( $(date +%s) - T0 )) s"
