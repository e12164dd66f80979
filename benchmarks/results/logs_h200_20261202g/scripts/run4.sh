#!/bin/bash
# run 4: stage 1 at maxnreg 144 (7 programs per SM instead of 6; offline 60 bytes of spills against
# 32-44, cpu_checks_20261202_s40/intra_regcap144_offline.log) against main, alternating processes,
# two rounds. Trees: .exp/main = git archive b714f48 kimiops (the kimiops of f67a1ce); .exp/rc144 = the same with
# INTRA_CONFIG["maxnreg"] 144
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w"; done
bash benchmarks/tools/prefill_ab_rounds.sh $OUT r4 2 main rc144
