#!/usr/bin/env bash
# One verification round on a GPU machine: GPU tests, the demo, `kimiops bench`, the transformers
# benchmark; logs under $OUT (default ./gpu_out). fla-core's wheel may be placed under .whl/.
# Usage: bash benchmarks/gpu_round.sh [tests] [demo] [bench] [bench-full] [transformers] [prefill]
set -uo pipefail
OUT=${OUT:-$PWD/gpu_out}
mkdir -p "$OUT/r"
# wheels carried in .whl/: fla-core (the comparator) goes to /tmp/fla, the rest to /tmp/site, so that
# the tests can run without FLA on the path
for w in .whl/*.whl; do
  [ -e "$w" ] || continue
  case $(basename "$w") in fla_core*) dest=/tmp/fla ;; *) dest=/tmp/site ;; esac
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target $dest "$w"
done
NOFLA=$PWD:/tmp/site
export PYTHONPATH=$NOFLA:/tmp/fla
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$OUT/r/nvidia_smi.txt"
steps=("$@")
[ ${#steps[@]} -eq 0 ] && steps=(tests demo bench)
for step in "${steps[@]}"; do
  case $step in
    # tests run without fla-core on the path: transformers would bind FLA's kernels as its
    # "fallback" (and spend minutes compiling them) instead of its torch reference
    # every GPU test: the gpu-marked ones and those that take the `device` fixture (CPU-only tests
    # skip on CUDA, tests/conftest.py). TEST_MARK="-m gpu" keeps the marked ones only, which left
    # two device tests failing unseen until 2026-12-02 (logs_h200_20261202d/README.md); the whole
    # set takes more than one 600 s device call: split it with TESTS
    tests) PYTHONPATH=$NOFLA timeout ${TEST_TIMEOUT:-300} python3 -m pytest -q ${TEST_MARK-} ${TESTS:-tests} -p no:cacheprovider > "$OUT/pytest_gpu.log" 2>&1
           tail -6 "$OUT/pytest_gpu.log" ;;
    demo) (time python3 -m kimiops.cli demo --no-progress) > "$OUT/demo.log" 2>&1; cat "$OUT/demo.log" ;;
    bench) timeout ${BENCH_TIMEOUT:-400} python3 -m kimiops.cli bench all --quick --out "$OUT/bench" > "$OUT/bench.log" 2>&1
           tail -40 "$OUT/bench.log" ;;
    bench-full) python3 -m kimiops.cli bench all --out "$OUT/bench" > "$OUT/bench.log" 2>&1
           tail -40 "$OUT/bench.log" ;;
    transformers) PYTHONPATH=$NOFLA timeout 150 python3 benchmarks/bench_transformers.py --out "$OUT/r" > "$OUT/r/transformers.log" 2>&1
           tail -12 "$OUT/r/transformers.log" ;;
    # the prefill table side by side with FLA (~4 min on the H200)
    prefill) timeout ${PREFILL_TIMEOUT:-330} python3 benchmarks/bench_kda_prefill.py --no-sweep --rep 20 --out "$OUT" > "$OUT/bench_prefill.log" 2>&1
           tail -16 "$OUT/bench_prefill.log" ;;
  esac
done
# at most 8 files come back: bundle the raw results
tar -czf "$OUT/raw.tgz" -C "$OUT" r $(test -d "$OUT/bench/raw" && echo bench/raw) && rm -rf "$OUT/r" "$OUT/bench/raw"
