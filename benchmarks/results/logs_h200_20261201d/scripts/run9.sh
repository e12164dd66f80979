#!/usr/bin/env bash
# Run 9: tree drafts in target verify (retrieve_parent_token; the decode kernel reads the parent's
# state back from the buffer): the GPU tests of the decode kernel, the backend, the ops and target
# verify, then the decode table and the target-verify rows again (the kernel gained a parameter).
set -uo pipefail
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w"; done
export PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site PYTHONUNBUFFERED=1
timeout 300 python3 -m pytest -v -m gpu tests/kda/test_verify.py tests/kda/test_recurrent_kernel.py \
  tests/kda/test_backend.py tests/kda/test_ops.py tests/kda/test_fla_keywords.py -p no:cacheprovider -rs > $OUT/r9_pytest_gpu.log 2>&1
grep -E "FAILED|ERROR|passed|failed|^E " $OUT/r9_pytest_gpu.log | tail -8
timeout 200 python3 benchmarks/bench_kda_decode.py --ns 1 8 64 128 --no-sweep --spec-ns 1 8 64 --verify-ns 1 8 64 \
  --out $OUT > $OUT/r9_bench_decode.log 2>&1
tail -24 $OUT/r9_bench_decode.log
