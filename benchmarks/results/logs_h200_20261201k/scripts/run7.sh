#!/bin/bash
# run 7: every GPU test of the prefill kernel file on the final code (single fixed-length calls that
# repeat now replay through elastic entries in the accuracy tests too)
export PYTHONPATH=$PWD:$PWD/benchmarks PYTHONUNBUFFERED=1
timeout 320 python3 -m pytest -q -m gpu tests/kda/test_chunk_kernel.py tests/kda/test_track.py > $OUT/r7_pytest_prefill_files.log 2>&1; echo "rc $?" >> $OUT/r7_pytest_prefill_files.log
