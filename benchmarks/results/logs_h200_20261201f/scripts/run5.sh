# run 5: kimiops against vLLM 0.33's own KDA kernels (extracted by benchmarks/tools/vllm_kda_extract.py into .exp/vllm_kda, carried)
set -u
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w"; done
export PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site PYTHONUNBUFFERED=1
cat .exp/vllm_kda/SOURCE
python3 benchmarks/bench_vllm_kda.py --vllm-src .exp/vllm_kda --out $OUT 2>&1 | tee $OUT/r5_bench_vllm.log
