# run 8: the one-token specialization (variant O, patch_one.py on this commit's kernel) against the loop and vLLM 0.33's packed decode
set -u
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w"; done
export PYTHONUNBUFFERED=1
S=benchmarks/results/logs_h200_20261201f/scripts
rm -rf /tmp/tree_O && mkdir -p /tmp/tree_O && cp -r kimiops /tmp/tree_O/ && python3 $S/patch_one.py /tmp/tree_O/kimiops/kda/kernels/recurrent.py
for r in 1 2; do
  PYTHONPATH=/tmp/tree_O:$PWD/benchmarks:/tmp/site python3 $S/one_token_ab.py .exp/vllm_kda 2>&1 | tee -a $OUT/r8_one_token_ab.log
done
