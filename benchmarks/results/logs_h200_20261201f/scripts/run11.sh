# run 11: the compiled decode kernels of this commit's tree and of the patched tree of run 8 (variant O), cubins to $OUT
set -u
export PYTHONUNBUFFERED=1
S=benchmarks/results/logs_h200_20261201f/scripts
rm -rf /tmp/tree_O && mkdir -p /tmp/tree_O && cp -r kimiops /tmp/tree_O/ && python3 $S/patch_one.py /tmp/tree_O/kimiops/kda/kernels/recurrent.py
PYTHONPATH=$PWD python3 $S/dump_cubin.py cur $OUT 2>&1 | tee -a $OUT/r11_dump.log
PYTHONPATH=/tmp/tree_O python3 $S/dump_cubin.py patched $OUT 2>&1 | tee -a $OUT/r11_dump.log
