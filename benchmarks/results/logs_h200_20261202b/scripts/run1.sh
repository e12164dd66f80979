#!/bin/bash
# run 1 (fbb14d0): the GPU tests the thirty-fourth session could not run (transformers' two on a cold
# machine; the two tf32 tests added on the CPU), then Nsight Compute on stage 1 at B8 T1024
# (precomputed g, then the softplus gate) to see what bounds it now
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w"; done
export PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv > $OUT/r1_gpu.txt 2>&1
T0=$(date +%s)
timeout 300 python3 -m pytest -q -m gpu tests/integrations/test_transformers.py > $OUT/r1_pytest_transformers.log 2>&1; echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/r1_pytest_transformers.log
timeout 100 python3 -m pytest -q -m gpu tests/kda/test_chunk_kernel.py -k "tb_exact or fp32_v_enters" > $OUT/r1_pytest_tf32.log 2>&1; echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/r1_pytest_tf32.log
for mode in g gate; do
  left=$(( 560 - ($(date +%s) - T0) )); [ $left -lt 60 ] && break
  extra=""; [ $mode = gate ] && extra="--gate"
  timeout $left ncu -k regex:chunk_intra -c 1 --set full --import-source yes -o $OUT/r1_ncu_intra_$mode \
    python3 benchmarks/profile_kda_prefill.py --batch 8 --seq-len 1024 --calls 2 $extra > $OUT/r1_ncu_run_$mode.log 2>&1
  echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/r1_ncu_run_$mode.log
  ncu --import $OUT/r1_ncu_intra_$mode.ncu-rep --page details > $OUT/r1_ncu_intra_${mode}_details.txt 2>&1
  ncu --import $OUT/r1_ncu_intra_$mode.ncu-rep --page source --csv --print-source cuda,sass > /tmp/src_$mode.csv 2>&1
  python3 benchmarks/tools/ncu_hot_lines.py /tmp/src_$mode.csv --top 40 --extra "L1 Wavefronts Shared Excessive" > $OUT/r1_ncu_intra_${mode}_hot_lines.txt 2>&1
  gzip -c /tmp/src_$mode.csv > $OUT/r1_ncu_intra_${mode}_source.csv.gz
  rm -f $OUT/r1_ncu_intra_$mode.ncu-rep
done
