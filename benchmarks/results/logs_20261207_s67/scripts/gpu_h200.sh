#!/bin/bash
# Sixty-seventh session, the whole round for an H200 (carry .whl; about 6 minutes): the prefetch sweep
# (gpu_round2.sh), then gpu_round1.sh (index study, ncu at N = 64, the prefetch A/B, and the sixty-sixth
# session's gpu_round3.sh: main's decode table and the tiles-per-program A/B). gpu_tile_cg.sh is left out (no
# gain on the H100, run 3).
S=benchmarks/results/logs_20261207_s67/scripts
bash $S/gpu_round2.sh 2>&1 | grep -E "N=|rc |H200|H100"
bash $S/gpu_round1.sh
