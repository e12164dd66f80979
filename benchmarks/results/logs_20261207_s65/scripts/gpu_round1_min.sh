#!/bin/bash
# Sixty-fifth session, run 1 at the least device time (about 2 minutes): the A/B of both forms at N = 64 only
# (the open figure), three configs each, and the path's GPU tests.
AB_NS=64 AB_BATCH="8x1he 8x1he:16s3 8x1he:16s2" AB_VARLEN="8x1h 8x1h:16s3 8x1h:16s2" TEST_K=tiles_per_program \
  BENCH_RUNS=0 bash benchmarks/results/logs_20261207_s65/scripts/gpu_round1.sh
