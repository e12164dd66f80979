#!/bin/bash
# Prepared in the fifty-first session, run 1 of 2: stage 1's sequence search as a loop on its range (no
# LOG_N constexpr), the request count N unspecialized, the sort's block at least 32, on a GPU. Ran on an H100
# (logs_h100_20261205d/, then with a third tree, nspec = 9153875, whose change main has since f7fbf36).
# Carry .whl (pip download --no-deps fla-core==0.6.0 -d .whl) and .exp/s50 (git archive 9daec9b kimiops:
# the tree before this session); the script copies this tree's kimiops to .exp/main. RUN_S (default 570)
# bounds the whole run.
# 1. A/B of stage 1 and the whole call, main against s50, three alternating rounds: the varlen
#    case, 64 sequences of 128 tokens (the deepest search), B1 T8192 and B8 T1024, precomputed g and the
#    softplus gate.
# 2. The GPU tests of varlen prefill, the eager shortcut, the replays, the fast launch path, graphs and
#    the search's own test.
export PYTHONUNBUFFERED=1
T0=$(date +%s)
RUN_S=${RUN_S:-570}
left() { echo $(( RUN_S - ($(date +%s) - T0) )); }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $OUT/gpu.log
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/fla_core-0.6.0-py3-none-any.whl
rm -rf .exp/main && mkdir -p .exp/main && cp -r kimiops .exp/main/  # prefill_ab_rounds.sh imports .exp/<tree>
AB_ARGS="--cases varlen7_16384,varlen64_128,B1_T8192,B8_T1024 --modes g,gate" \
  bash benchmarks/tools/prefill_ab_rounds.sh $OUT ab 3 main s50 > $OUT/ab_summary.log 2>&1
echo "A/B done after $(( $(date +%s) - T0 )) s"
(cd $OUT && tar czf ab_round_ab_logs.tgz ab_round_ab_*.log && rm ab_round_ab_*.log)
tail -10 $OUT/ab_summary.log
PYTHONPATH=$PWD timeout $(left) python3 -m pytest -q -p no:cacheprovider tests/kda/test_prefill_replay.py \
  tests/test_launch.py tests/kda/test_chunk_kernel.py tests/kda/test_locate_chunk.py \
  -k "varlen or eager or replay or fast_launch or cuda_graph or parts or segments or key or order or sequence_rows or malformed" \
  > $OUT/pytest_search.log 2>&1
echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/pytest_search.log
tail -n 4 $OUT/pytest_search.log
echo "total $(( $(date +%s) - T0 )) s"
