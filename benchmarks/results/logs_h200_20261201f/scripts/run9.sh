# run 9: bench_vllm_kda.py decode rows with a small pool (--ns 1 2 8: 641 slots, 1.3 GiB) and the default one (--ns 1 8 64: 5121 slots, 10 GiB)
set -u
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w"; done
export PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site PYTHONUNBUFFERED=1
for ns in "1 2 8" "1 8 64" "1 2 8"; do
  python3 benchmarks/bench_vllm_kda.py --vllm-src .exp/vllm_kda --out /tmp/o --ns $ns --no-prefill 2>&1 | grep -v "^wrote" | tee -a $OUT/r9_pool_size.log
done
