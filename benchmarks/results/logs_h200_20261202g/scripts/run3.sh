#!/bin/bash
# run 3 (main after the Gluon kernel's deletion): Nsight Compute on the Triton state kernel at B1
# T8192 (precomputed g, the launcher's 4 parts: the first part's launch, 64 CTAs of 4 warps), where
# the state stage is the longer stage; then every GPU test outside tests/kda (not run since
# bbb611a; launch.py's slow path was refactored since) and tests/kda/test_ops.py; the demo
export PYTHONUNBUFFERED=1
T0=$(date +%s)
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/fla "$w"; done
PYTHONPATH=$PWD:$PWD/benchmarks timeout 200 ncu -k regex:chunk_state -c 1 --set full --import-source yes -o $OUT/r3_ncu_state_g \
  python3 benchmarks/profile_kda_prefill.py --batch 1 --seq-len 8192 --calls 2 > $OUT/r3_ncu_run.log 2>&1
echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/r3_ncu_run.log
ncu --import $OUT/r3_ncu_state_g.ncu-rep --page details > $OUT/r3_ncu_state_g_details.txt 2>&1
ncu --import $OUT/r3_ncu_state_g.ncu-rep --page source --csv --print-source cuda,sass > /tmp/src.csv 2>&1
python3 benchmarks/tools/ncu_hot_lines.py /tmp/src.csv --top 50 > $OUT/r3_ncu_state_g_hot_lines.txt 2>&1
gzip -c /tmp/src.csv > $OUT/r3_ncu_state_g_source.csv.gz
python3 benchmarks/results/logs_h200_20261202e/scripts/stall_reasons.py $OUT/r3_ncu_state_g_source.csv.gz > $OUT/r3_stall_reasons.log 2>&1
rm -f $OUT/r3_ncu_state_g.ncu-rep
cat $OUT/r3_stall_reasons.log; grep -E "Duration|Registers|Achieved Occupancy|Issue Slots Busy|Eligible Warps|No Eligible|Executed Ipc A|Block Limit|Shared Memory Configuration Size|Dynamic Shared" $OUT/r3_ncu_state_g_details.txt | head -20
PYTHONPATH=$PWD timeout 300 python3 -m pytest -q tests --ignore=tests/kda -p no:cacheprovider > $OUT/r3_pytest_outside_kda.log 2>&1
echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/r3_pytest_outside_kda.log; tail -2 $OUT/r3_pytest_outside_kda.log
PYTHONPATH=$PWD timeout 150 python3 -m pytest -q tests/kda/test_ops.py -p no:cacheprovider > $OUT/r3_pytest_kda_ops.log 2>&1
echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/r3_pytest_kda_ops.log; tail -2 $OUT/r3_pytest_kda_ops.log
(time PYTHONPATH=$PWD timeout 100 python3 -m kimiops.cli demo --no-progress) > $OUT/r3_demo.log 2>&1; tail -8 $OUT/r3_demo.log
