# run 10: why run 8's script timed our N = 1 packed decode 0.5 us faster than bench_vllm_kda.py: the same
# script on this commit's unpatched tree (its "one" column is then the loop again), then bench_vllm_kda.py --ns 1 2
set -u
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w"; done
export PYTHONUNBUFFERED=1
S=benchmarks/results/logs_h200_20261201f/scripts
PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site python3 $S/one_token_ab.py .exp/vllm_kda 2>&1 | tee -a $OUT/r10_context.log
PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site python3 benchmarks/bench_vllm_kda.py --vllm-src .exp/vllm_kda --out /tmp/o --ns 1 2 --no-prefill 2>&1 | grep -v "^wrote" | tee -a $OUT/r10_context.log
PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site python3 $S/one_token_ab.py .exp/vllm_kda 2>&1 | tee -a $OUT/r10_context.log
