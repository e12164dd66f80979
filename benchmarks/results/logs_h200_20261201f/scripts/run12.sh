# run 12: run 8's script on the patched tree (variant O) and on this commit's tree, alternating in one device session
set -u
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w"; done
export PYTHONUNBUFFERED=1
S=benchmarks/results/logs_h200_20261201f/scripts
rm -rf /tmp/tree_O && mkdir -p /tmp/tree_O && cp -r kimiops /tmp/tree_O/ && python3 $S/patch_one.py /tmp/tree_O/kimiops/kda/kernels/recurrent.py
for t in /tmp/tree_O $PWD /tmp/tree_O $PWD; do
  PYTHONPATH=$t:$PWD/benchmarks:/tmp/site python3 $S/one_token_ab.py .exp/vllm_kda 2>&1 | head -3 | tee -a $OUT/r12_alternate.log
done
nvidia-smi --query-gpu=name,serial,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv | tee -a $OUT/r12_alternate.log
