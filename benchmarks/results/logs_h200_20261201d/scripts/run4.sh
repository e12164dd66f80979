#!/usr/bin/env bash
# Run 4 (and 5, with the pool sized for --verify-ns alone; 6, the buffer row stride a constexpr; 7, the check by tolerance and bytes in the buffer dtype): the two GPU target-verify tests after their fix (the oracle's zero start states were built
# on the CPU beside CUDA pool states), and the target-verify rows again.
set -uo pipefail
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w"; done
export PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site PYTHONUNBUFFERED=1
timeout 200 python3 -m pytest -v -m gpu tests/kda/test_verify.py -p no:cacheprovider -rs > $OUT/r${RUN:-4}_pytest_gpu.log 2>&1
grep -E "FAILED|ERROR|passed|failed|^E " $OUT/r${RUN:-4}_pytest_gpu.log | tail -8
timeout 200 python3 benchmarks/bench_kda_decode.py --ns 1 --no-sweep --spec-ns --verify-ns 1 8 64 \
  --out $OUT > $OUT/r${RUN:-4}_bench_decode.log 2>&1
tail -12 $OUT/r${RUN:-4}_bench_decode.log
