# run 4: batch mode, the tree before the batch table (9ad26e7, `git archive 9ad26e7 kimiops` carried in .exp/) against this commit's, alternating processes
set -u
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w"; done
export PYTHONUNBUFFERED=1
S=benchmarks/results/logs_h200_20261201f/scripts
rm -rf /tmp/tree_old /tmp/tree_new && mkdir -p /tmp/tree_old /tmp/tree_new && cp -r kimiops /tmp/tree_new/
tar -xf .exp/kimiops_9ad26e7.tar -C /tmp/tree_old
for v in old new old new; do
  PYTHONPATH=/tmp/tree_$v:$PWD/benchmarks:/tmp/site python3 $S/batch_cfg_ab.py $v 2>&1 | grep -v '^{' | tee -a $OUT/r4_batch_cfg_ab.log
done
