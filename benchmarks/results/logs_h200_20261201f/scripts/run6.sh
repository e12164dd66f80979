# run 6: N = 1 / 2 tile configs of the kimiops decode kernel against vLLM 0.33's kernels; bench_vllm_kda.py again with the prefill check fixed
set -u
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w"; done
export PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site PYTHONUNBUFFERED=1
python3 benchmarks/results/logs_h200_20261201f/scripts/n1_ab.py .exp/vllm_kda 2>&1 | tee $OUT/r6_n1_ab.log
python3 benchmarks/bench_vllm_kda.py --vllm-src .exp/vllm_kda --out $OUT 2>&1 | tee $OUT/r6_bench_vllm.log
