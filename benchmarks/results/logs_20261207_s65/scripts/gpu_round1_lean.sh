#!/bin/bash
# Sixty-fifth session, run 1 when little device time is left (carry .whl), about 4 minutes: gpu_round1.sh at
# N = 64 and 128 only, three configs per form, the path's GPU tests, and the decode table once.
AB_NS="64 128" AB_BATCH="8x1he 8x1he:16s3 8x1he:16s2" AB_VARLEN="8x1h 8x1h:16s3 8x1h:16s2" \
  TEST_K=tiles_per_program BENCH_RUNS=1 BENCH_NS="64 128" bash benchmarks/results/logs_20261207_s65/scripts/gpu_round1.sh
