# run 14: N = 1 graph medians on the patched tree (variant O) and this commit's, with and without the one-token kernel compiled, PDL on / off
set -u
export PYTHONUNBUFFERED=1
S=benchmarks/results/logs_h200_20261201f/scripts
rm -rf /tmp/tree_O && mkdir -p /tmp/tree_O && cp -r kimiops /tmp/tree_O/ && python3 $S/patch_one.py /tmp/tree_O/kimiops/kda/kernels/recurrent.py
for r in 1 2; do
  PYTHONPATH=/tmp/tree_O python3 $S/n1_graph.py patched 2>&1 | tee -a $OUT/r14_n1_graph.log
  PYTHONPATH=/tmp/tree_O python3 $S/n1_graph.py patched both 2>&1 | tee -a $OUT/r14_n1_graph.log
  PYTHONPATH=$PWD python3 $S/n1_graph.py current 2>&1 | tee -a $OUT/r14_n1_graph.log
done
