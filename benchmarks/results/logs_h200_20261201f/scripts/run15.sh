# run 15: kimiops.integrations.vllm: GPU tests (vllm, sglang, recurrent kernel), bench_vllm_kda.py with the adapter's prefill
set -u
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w"; done
export PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site PYTHONUNBUFFERED=1
timeout 240 python3 -m pytest -q -m gpu tests/integrations/test_vllm.py tests/integrations/test_sglang.py tests/kda/test_recurrent_kernel.py 2>&1 | tail -3 | tee $OUT/r15_pytest_gpu.log
python3 benchmarks/bench_vllm_kda.py --vllm-src .exp/vllm_kda --out $OUT 2>&1 | tee $OUT/r15_bench_vllm.log
