#!/bin/bash
# Fifty-seventh session, last device time (~420 s): on an H200 the prefill table within RUN_S
# (h200_table_bounded.sh, in-kernel gate first), on any other card the seed-58 randomized checks under the
# sanitizers (gpu_fuzz_sanitize.sh) within RUN_S. Carry .whl.
S=benchmarks/results/logs_20261206_s57/scripts
nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 && exec bash $S/h200_table_bounded.sh
exec bash $S/gpu_fuzz_sanitize.sh
