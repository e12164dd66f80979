# run 9: bench_vllm_kda.py decode rows with eager paces (vLLM's functions, the adapters, the direct calls)
set -u
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w"; done
export PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site PYTHONUNBUFFERED=1
python3 benchmarks/bench_vllm_kda.py --vllm-src .exp/vllm_kda --out $OUT --ns 1 8 64 --no-prefill 2>&1 | tee $OUT/r9_bench_vllm.log
python3 -c "import torch; a = torch.zeros(1, device='cuda'); from kimiops.bench.timing import loop_us; print('torch.add_ eager pace', round(loop_us(lambda: a.add_(1), n=500, rounds=5, sync=torch.cuda.synchronize), 1), 'us')" 2>&1 | tee -a $OUT/r9_bench_vllm.log
