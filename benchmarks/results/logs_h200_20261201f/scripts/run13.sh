# run 13: the CUDA graphs (DOT) and eager kernels of the N = 1 packed decode on the patched tree (variant O) and this commit's
set -u
export PYTHONUNBUFFERED=1
S=benchmarks/results/logs_h200_20261201f/scripts
rm -rf /tmp/tree_O && mkdir -p /tmp/tree_O && cp -r kimiops /tmp/tree_O/ && python3 $S/patch_one.py /tmp/tree_O/kimiops/kda/kernels/recurrent.py
PYTHONPATH=/tmp/tree_O python3 $S/graph_dump.py patched $OUT 2>&1 | tee -a $OUT/r13_graphs.log
PYTHONPATH=$PWD python3 $S/graph_dump.py cur $OUT 2>&1 | tee -a $OUT/r13_graphs.log
