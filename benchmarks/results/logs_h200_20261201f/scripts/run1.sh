# run 1: batch mode against the cu_seqlens form, on the committed kernel and three variants
set -u
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w"; done
export PYTHONUNBUFFERED=1
S=benchmarks/results/logs_h200_20261201f/scripts
for v in base R U RU; do
  rm -rf /tmp/tree_$v && mkdir -p /tmp/tree_$v && cp -r kimiops /tmp/tree_$v/
  f=/tmp/tree_$v/kimiops/kda/kernels/recurrent.py
  case $v in R) python3 $S/patch_reorder.py $f;; U) python3 $S/patch_hastok.py $f;; RU) python3 $S/patch_reorder.py $f; python3 $S/patch_hastok.py $f;; esac
done
for v in base R U RU base; do
  PYTHONPATH=/tmp/tree_$v:$PWD/benchmarks:/tmp/site python3 $S/batch_ab.py $v 2>&1 | tee -a $OUT/r1_batch_ab.log
done
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu --format=csv >> $OUT/r1_batch_ab.log
