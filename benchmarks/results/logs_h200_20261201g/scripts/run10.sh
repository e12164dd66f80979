# run 10: the vLLM packed-decode adapter with one as_strided per tensor: GPU tests of both engine
# integrations, then bench_vllm_kda.py's decode rows with eager paces
set -u
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w"; done
export PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site PYTHONUNBUFFERED=1
timeout 120 python3 -m pytest -q -m gpu tests/integrations/test_vllm.py tests/integrations/test_sglang.py 2>&1 | tail -2 | tee $OUT/r10_pytest_gpu.log
python3 benchmarks/bench_vllm_kda.py --vllm-src .exp/vllm_kda --out $OUT --ns 1 8 64 --no-prefill 2>&1 | tee $OUT/r10_bench_vllm.log
