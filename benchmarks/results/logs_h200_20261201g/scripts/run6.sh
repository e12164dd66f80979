# run 6: pad_slot_id and the vLLM decode adapters: GPU tests of the decode kernel, its keywords, the backend,
# verify and both engine integrations; bench_vllm_kda (decode through the adapters too, and prefill);
# bench_kda_decode with the speculative and target-verify rows (N = 1, 8, 64)
set -u
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w"; done
export PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site PYTHONUNBUFFERED=1
timeout 330 python3 -m pytest -q -m gpu tests/kda/test_recurrent_kernel.py tests/kda/test_fla_keywords.py \
  tests/kda/test_backend.py tests/kda/test_verify.py tests/integrations 2>&1 | tail -4 | tee $OUT/r6_pytest_gpu.log
python3 benchmarks/bench_vllm_kda.py --vllm-src .exp/vllm_kda --out $OUT --ns 1 2 8 64 2>&1 | tee $OUT/r6_bench_vllm.log
python3 benchmarks/bench_kda_decode.py --out $OUT --ns 1 8 64 --no-sweep --spec-ns 1 8 64 --verify-ns 1 8 64 2>&1 \
  | tee $OUT/r6_bench_decode.log
