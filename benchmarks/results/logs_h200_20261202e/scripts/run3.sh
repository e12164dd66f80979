#!/bin/bash
# run 3: Nsight Compute on stage 1 at B8 T1024 (precomputed g, then the softplus gate): the first
# profile since the thirty-fifth session (logs_h200_20261202b run 1), after ftz exponentials and the
# gate without the hardware log
export PYTHONPATH=$PWD:$PWD/benchmarks PYTHONUNBUFFERED=1
T0=$(date +%s)
for mode in g gate; do
  left=$(( 540 - ($(date +%s) - T0) )); [ $left -lt 60 ] && break
  extra=""; [ $mode = gate ] && extra="--gate"
  timeout $left ncu -k regex:chunk_intra -c 1 --set full --import-source yes -o $OUT/r3_ncu_intra_$mode \
    python3 benchmarks/profile_kda_prefill.py --batch 8 --seq-len 1024 --calls 2 $extra > $OUT/r3_ncu_run_$mode.log 2>&1
  echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/r3_ncu_run_$mode.log
  ncu --import $OUT/r3_ncu_intra_$mode.ncu-rep --page details > $OUT/r3_ncu_intra_${mode}_details.txt 2>&1
  ncu --import $OUT/r3_ncu_intra_$mode.ncu-rep --page source --csv --print-source cuda,sass > /tmp/src_$mode.csv 2>&1
  python3 benchmarks/tools/ncu_hot_lines.py /tmp/src_$mode.csv --top 40 --extra "L1 Wavefronts Shared Excessive" > $OUT/r3_ncu_intra_${mode}_hot_lines.txt 2>&1
  gzip -c /tmp/src_$mode.csv > $OUT/r3_ncu_intra_${mode}_source.csv.gz
  rm -f $OUT/r3_ncu_intra_$mode.ncu-rep
done
