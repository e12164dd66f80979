#!/bin/bash
# Fifty-sixth session, run 4, on main (carry .whl): run 3's H200 branch only (the Triton linear's split counts,
# then the prefill table beside FLA 0.6); on an H100 it records the card and stops.
nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 || { nvidia-smi -L > $OUT/gpu.log; echo "not an H200"; exit 0; }
sed -i 's/^if grep -q H200 \$OUT\/gpu.log; then/if true; then/' benchmarks/results/cpu_checks_20261206_s56/scripts/gpu_round3.sh
bash benchmarks/results/cpu_checks_20261206_s56/scripts/gpu_round3.sh
