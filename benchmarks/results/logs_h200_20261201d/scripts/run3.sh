#!/usr/bin/env bash
# Run 3 (twenty-fifth session): target verification in SGLang's form (KDABackend.target_verify,
# the decode kernel's SPEC = 2): the GPU tests of the decode kernel, the backend and the ops, then
# the decode benchmark with the speculative and target-verify rows (ours vs FLA in one process).
set -uo pipefail
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w"; done
export PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site PYTHONUNBUFFERED=1
timeout 330 python3 -m pytest -v -m gpu tests/kda/test_verify.py tests/kda/test_recurrent_kernel.py \
  tests/kda/test_backend.py tests/kda/test_ops.py -p no:cacheprovider -rs > $OUT/r3_pytest_gpu.log 2>&1
grep -E "FAILED|ERROR|passed|failed" $OUT/r3_pytest_gpu.log | tail -8
timeout 240 python3 benchmarks/bench_kda_decode.py --ns 1 8 64 128 --no-sweep --spec-ns 1 8 64 --verify-ns 1 8 64 \
  --out $OUT > $OUT/r3_bench_decode.log 2>&1
tail -30 $OUT/r3_bench_decode.log
