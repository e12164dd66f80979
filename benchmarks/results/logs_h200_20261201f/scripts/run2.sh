# run 2: batch-mode config sweep on the committed kernel (base) and with the first token's inputs loaded before the state tile (R)
set -u
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w"; done
export PYTHONUNBUFFERED=1
S=benchmarks/results/logs_h200_20261201f/scripts
for v in base R; do
  rm -rf /tmp/tree_$v && mkdir -p /tmp/tree_$v && cp -r kimiops /tmp/tree_$v/
  f=/tmp/tree_$v/kimiops/kda/kernels/recurrent.py
  case $v in R) python3 $S/patch_reorder.py $f;; esac
done
for v in base R; do
  PYTHONPATH=/tmp/tree_$v:$PWD/benchmarks:/tmp/site python3 $S/batch_sweep.py $v 2>&1 | tee -a $OUT/r2_batch_sweep.log
done
