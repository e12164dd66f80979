#!/bin/bash
# Run 2 of the sixtieth session, on the machine run 1 left warm: the whole test suite in four shards
# (benchmarks/tools/gpu_suite.sh, 540 s a shard), with the card and the revision.
nvidia-smi --query-gpu=name --format=csv > $OUT/gpu.log; git log --oneline -1 > $OUT/rev.log 2>&1
bash benchmarks/tools/gpu_suite.sh $OUT 540 > $OUT/suite_summary.log 2>&1; cat $OUT/suite_summary.log
