#!/bin/bash
# For the next session, one call on any card: the B1 cells' A/B of branch exp/parts-tail-hint against main
# (prefill_ab_rounds.sh, 2 rounds, g and the in-kernel gate), the GPU tests of stage-by-stage launches and of the
# padding rows (not run since the _plan fix), then on an H200 the prefill table on main with the time
# left (h200_table_bounded.sh). Before the call:
#   rm -rf .exp/main .exp/ztail && mkdir -p .exp/main .exp/ztail
#   git archive main kimiops | tar -x -C .exp/main; git archive exp/parts-tail-hint kimiops | tar -x -C .exp/ztail
# and carry .whl, .exp/main, .exp/ztail.
export PYTHONUNBUFFERED=1
T0=$(date +%s)
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/fla_core-0.6.0-py3-none-any.whl
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv > $OUT/gpu.log; cat $OUT/gpu.log
AB_ARGS="--cases B1_T8192,B1_T32768 --modes g,gate" bash benchmarks/tools/prefill_ab_rounds.sh $OUT tail 2 main ztail
PYTHONPATH=$PWD timeout 200 python3 -m pytest -q -p no:cacheprovider tests/kda/test_chunk_kernel.py \
  -k "beyond_shared_memory or stage_by_stage or zero_padding_rows" > $OUT/pytest_stage_launches.log 2>&1
echo "rc $?" >> $OUT/pytest_stage_launches.log; tail -n 2 $OUT/pytest_stage_launches.log
LEFT=$(( 575 - ($(date +%s) - T0) ))
grep -q H200 $OUT/gpu.log && [ $LEFT -gt 120 ] && RUN_S=$LEFT bash benchmarks/results/logs_20261206_s57/scripts/h200_table_bounded.sh
exit 0
