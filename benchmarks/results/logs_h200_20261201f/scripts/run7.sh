# run 7: speculative decode with the pool slot of each token's state loaded a token ahead (this commit) against the
# commit before (d5ec031 + run 6 logs, `git archive HEAD kimiops benchmarks/bench_vllm_kda.py benchmarks/bench_kda_decode.py`
# carried in .exp/old_repo.tar), two processes each, alternating; vLLM 0.33's kernels in every process
set -u
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w"; done
export PYTHONUNBUFFERED=1
rm -rf /tmp/old && mkdir -p /tmp/old && tar -xf .exp/old_repo.tar -C /tmp/old
for v in old new old new; do
  if [ $v = old ]; then R=/tmp/old; else R=$PWD; fi
  echo "== $v" | tee -a $OUT/r7_spec_ab.log
  PYTHONPATH=$R:$R/benchmarks:/tmp/site python3 $R/benchmarks/bench_vllm_kda.py --vllm-src .exp/vllm_kda --out /tmp/o_$v --ns 1 2 8 64 --no-prefill 2>&1 | grep -v "^wrote\|^NVIDIA" | tee -a $OUT/r7_spec_ab.log
done
PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site timeout 240 python3 -m pytest -q -m gpu tests/kda/test_fla_keywords.py tests/kda/test_recurrent_kernel.py tests/kda/test_verify.py 2>&1 | tail -3 | tee $OUT/r7_pytest_gpu.log
PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site python3 benchmarks/bench_kda_decode.py --out $OUT --ns 1 8 64 --no-sweep --spec-ns 1 2 8 64 --verify-ns 1 8 64 2>&1 | tee $OUT/r7_bench_decode.log
