#!/usr/bin/env bash
# Run 1 (twenty-fourth session): GPU tests of the KDA ops and integrations, then the decode
# benchmark (ours vs FLA, plus the speculative-verification rows) on the same tree.
set -uo pipefail
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w"; done
export PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $OUT/r1_nvidia_smi.txt
timeout 330 python3 -m pytest -q -m gpu tests/kda tests/integrations -p no:cacheprovider -rs > $OUT/r1_pytest_gpu_kda.log 2>&1
tail -4 $OUT/r1_pytest_gpu_kda.log
timeout 200 python3 benchmarks/bench_kda_decode.py --ns 1 2 8 64 128 --no-sweep --spec-ns 1 8 64 --out $OUT > $OUT/r1_bench_decode.log 2>&1
tail -22 $OUT/r1_bench_decode.log
