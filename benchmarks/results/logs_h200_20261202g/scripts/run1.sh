#!/bin/bash
# run 1: the Gluon state kernel as committed in the thirty-ninth session (7285dc9): its GPU tests and
# the state stage alone against the Triton kernel (benchmarks/tools/gluon_state_round.sh, no table)
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w"; done
nvidia-smi --query-gpu=name,clocks.sm --format=csv
bash benchmarks/tools/gluon_state_round.sh $OUT 2>&1 | tail -60
