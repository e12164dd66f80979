#!/usr/bin/env bash
# Run 2 (after the packed path went to fused_recurrent_kda on as_strided views, fewer host ops): SGLang's KDA kernel interface on kimiops (kimiops/integrations/sglang.py): its GPU tests
# with those of the backend, target verify and the ops it calls, then the SGLang-shaped decode
# bench (adapter vs KDABackend vs FLA, one process).
set -uo pipefail
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w"; done
export PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
timeout 330 python3 -m pytest -v -m gpu tests/integrations/test_sglang.py tests/kda/test_backend.py \
  -p no:cacheprovider -rs > $OUT/r2_pytest_gpu.log 2>&1
grep -E "FAILED|ERROR|passed|failed|^E " $OUT/r2_pytest_gpu.log | tail -12
timeout 200 python3 benchmarks/bench_sglang_decode.py --out $OUT > $OUT/r2_bench_sglang.log 2>&1
tail -12 $OUT/r2_bench_sglang.log
