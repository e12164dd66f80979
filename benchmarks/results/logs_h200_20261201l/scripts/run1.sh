#!/bin/bash
# run 1: the lower-bound gate's anchored diagonal blocks: A/B against the hierarchy (stage 1 and the
# whole call, graph medians, FLA safe_gate beside), accuracy of both; every GPU test of the prefill
# kernel file (the new finite-and-exact test among them)
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w"; done
export PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > $OUT/r1_gpu.txt 2>&1
timeout 220 python3 benchmarks/results/logs_h200_20261201l/scripts/anchor_ab.py > $OUT/r1_anchor_ab.log 2>&1; echo "rc $?" >> $OUT/r1_anchor_ab.log
timeout 330 python3 -m pytest -q -s -m gpu tests/kda/test_chunk_kernel.py > $OUT/r1_pytest_chunk_kernel.log 2>&1; echo "rc $?" >> $OUT/r1_pytest_chunk_kernel.log
