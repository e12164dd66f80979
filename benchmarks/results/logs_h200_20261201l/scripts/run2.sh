#!/bin/bash
# run 2: the anchored diagonal's tf32 operands rounded to nearest (tf32_rna) before the dots:
# accuracy of both variants at the shape, then the A/B of run 1 on B8 T1024 and B1 T8192;
# the GPU tests of the prefill kernel file with the lower-bound gate or the anchored diagonal
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w"; done
export PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > $OUT/r2_gpu.txt 2>&1
timeout 200 python3 benchmarks/results/logs_h200_20261201l/scripts/anchor_ab.py B8_T1024 B1_T8192 > $OUT/r2_anchor_ab.log 2>&1; echo "rc $?" >> $OUT/r2_anchor_ab.log
timeout 280 python3 -m pytest -q -s -m gpu tests/kda/test_chunk_kernel.py -k "lower_bound or anchored" > $OUT/r2_pytest_lower_bound.log 2>&1; echo "rc $?" >> $OUT/r2_pytest_lower_bound.log
