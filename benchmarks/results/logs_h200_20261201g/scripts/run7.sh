# run 7: the GPU tests run 6 did not reach (its pytest stopped at the time limit in the transformers
# test): vLLM and SGLang integrations, FLA keywords, backend, verify; then the linear kernels' PDL
# order, committed tree against a patched copy (patch_linear_order.py), alternating processes
set -u
export PYTHONUNBUFFERED=1
S=benchmarks/results/logs_h200_20261201g/scripts
PYTHONPATH=$PWD timeout 250 python3 -m pytest -q -m gpu -rA tests/integrations/test_vllm.py tests/integrations/test_sglang.py \
  tests/kda/test_fla_keywords.py tests/kda/test_backend.py tests/kda/test_verify.py 2>&1 | grep -v "^PASSED" | tail -8 | tee $OUT/r7_pytest_gpu.log
rm -rf /tmp/tree_L && mkdir -p /tmp/tree_L && cp -r kimiops /tmp/tree_L/ && python3 $S/patch_linear_order.py /tmp/tree_L/kimiops/gemm
for r in 1 2; do
  PYTHONPATH=$PWD:$PWD/benchmarks timeout 70 python3 $S/linear_order.py release 2>&1 | tail -2 | tee -a $OUT/r7_linear_order.log
  PYTHONPATH=/tmp/tree_L:$PWD/benchmarks timeout 70 python3 $S/linear_order.py wait 2>&1 | tail -2 | tee -a $OUT/r7_linear_order.log
done
