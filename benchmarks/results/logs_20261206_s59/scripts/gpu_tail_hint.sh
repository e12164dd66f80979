#!/bin/bash
# Fifty-ninth session, runs 4-5: run 3 timed one prompt in pipelined parts 1.5-3.7% faster with the zero-rows
# block after the walk (.exp/zend, flag on) than without it, padding rows or not. Tree .exp/ztail: .exp/zend with
# the block compiled into every parted launch, fixed length too (a no-op there: no rows past the last sequence),
# so the B1 cells (4 and 8 parts) get that compile; against .exp/zstart (main). prefill_ab_rounds.sh,
# 2 rounds, B1 T8192 and B1 T32768, precomputed g and the in-kernel gate. Then (run 5) main's GPU tests of the
# stage-by-stage launches (broken by the fifty-eighth session's plan key, fixed since) and of the padding rows.
# Carry .whl, .exp/zstart, .exp/ztail (both with main's _plan fix). Run 4 failed on the _plan bug, run 5 got no
# machine. To run it later: .exp/zstart = `git archive main kimiops`, .exp/ztail = `git archive exp/parts-tail-hint
# kimiops` (main since 5742ea6 stores the zeros after the walk in parted launches, as .exp/zend did).
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/fla_core-0.6.0-py3-none-any.whl
nvidia-smi --query-gpu=name --format=csv,noheader > $OUT/gpu.log
AB_ARGS="--cases B1_T8192,B1_T32768 --modes g,gate" bash benchmarks/tools/prefill_ab_rounds.sh $OUT tail 2 zstart ztail
PYTHONPATH=$PWD timeout 200 python3 -m pytest -q -p no:cacheprovider tests/kda/test_chunk_kernel.py \
  -k "beyond_shared_memory or stage_by_stage or zero_padding_rows" > $OUT/pytest_stage_launches.log 2>&1
echo "rc $?" >> $OUT/pytest_stage_launches.log; tail -n 2 $OUT/pytest_stage_launches.log
