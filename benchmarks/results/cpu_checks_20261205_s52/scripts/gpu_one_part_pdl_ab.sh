#!/bin/bash
# Prepared in the fifty-second session for the next GPU (the session's device time ran out): branch
# exp/one-part-pdl, where calls in one part launch stage 1 as a chain's first part compiles it (PDL 1)
# wherever PDL exists, one compiled stage 1 fewer per gate mode for a server that sees batches and long
# prompts. Offline sm_90 (cpu_checks_20261205_s52/one_part_pdl_sass.log): fixed-length and softplus-gate
# varlen builds keep the same loop bodies; the precomputed-g varlen build's pass 1 is scheduled
# differently (same instruction count), so it needs this A/B before main takes it.
# Run with the branch checked out; carry .whl and .exp/main (git archive main kimiops); the script copies
# this tree's kimiops to .exp/onepdl. RUN_S (default 570) bounds the whole run.
# 1. A/B, three alternating rounds: the varlen case, 64 x 128 tokens, B8 T1024 (one part) and
#    B1 T8192 (parts, unchanged), precomputed g and the softplus gate;
# 2. the cold first calls of ten extends per tree;
# 3. the GPU tests of replays, the fast launch path, graphs and pipelined parts on the branch.
export PYTHONUNBUFFERED=1
T0=$(date +%s)
RUN_S=${RUN_S:-570}
left() { echo $(( RUN_S - ($(date +%s) - T0) )); }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $OUT/gpu.log
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/fla_core-0.6.0-py3-none-any.whl
rm -rf .exp/onepdl && mkdir -p .exp/onepdl && cp -r kimiops .exp/onepdl/
AB_ARGS="--cases varlen7_16384,varlen64_128,B8_T1024,B1_T8192 --modes g,gate" \
  bash benchmarks/tools/prefill_ab_rounds.sh $OUT ab 3 main onepdl > $OUT/ab_summary.log 2>&1
echo "A/B done after $(( $(date +%s) - T0 )) s"
(cd $OUT && tar czf ab_round_ab_logs.tgz ab_round_ab_*.log && rm ab_round_ab_*.log)
tail -12 $OUT/ab_summary.log
for tree in main onepdl; do
  [ $(left) -lt 60 ] && break
  PYTHONPATH=$PWD/.exp/$tree:$PWD/benchmarks timeout $(( $(left) < 90 ? $(left) : 90 )) python3 \
    benchmarks/tools/first_call_compile.py --cases extend_walk > $OUT/first_call_compile_$tree.log 2>&1
  echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/first_call_compile_$tree.log
  tail -n 3 $OUT/first_call_compile_$tree.log
done
PYTHONPATH=$PWD timeout $(left) python3 -m pytest -q -p no:cacheprovider tests/kda/test_prefill_replay.py \
  tests/test_launch.py tests/kda/test_chunk_kernel.py \
  -k "varlen or eager or replay or fast_launch or cuda_graph or parts or segments or two_streams" \
  > $OUT/pytest_one_part_pdl.log 2>&1
echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/pytest_one_part_pdl.log
tail -n 4 $OUT/pytest_one_part_pdl.log
echo "total $(( $(date +%s) - T0 )) s"
