# run 4: the tables with wait_first at N*HV <= 32: GPU tests of the decode kernel and its callers, then the decode,
# SGLang and vLLM benchmarks
set -u
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w"; done
export PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site PYTHONUNBUFFERED=1
timeout 300 python3 -m pytest -q -m gpu tests/kda/test_recurrent_kernel.py tests/kda/test_backend.py tests/kda/test_verify.py \
  tests/integrations/test_sglang.py tests/integrations/test_vllm.py 2>&1 | tail -4 | tee $OUT/r4_pytest_gpu.log
python3 benchmarks/bench_kda_decode.py --out $OUT --ns 1 2 4 8 16 64 128 512 --no-sweep 2>&1 | tee $OUT/r4_bench_decode.log
python3 benchmarks/bench_vllm_kda.py --vllm-src .exp/vllm_kda --out $OUT --no-prefill 2>&1 | tee $OUT/r4_bench_vllm.log
python3 benchmarks/bench_sglang_decode.py --out $OUT 2>&1 | tee $OUT/r4_bench_sglang.log
