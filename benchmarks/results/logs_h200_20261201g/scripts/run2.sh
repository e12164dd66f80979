# run 2: source variants of our decode kernel and of vLLM's packed-decode kernel at N = 1, 2, 8 (two processes)
set -u
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w"; done
export PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site PYTHONUNBUFFERED=1
S=benchmarks/results/logs_h200_20261201g/scripts
for r in 1 2; do python3 $S/variants.py .exp/vllm_kda 2>&1 | tee -a $OUT/r2_variants.log; done
