#!/bin/bash
# Run 3 (prepared in the forty-fifth session, not run: no machine was lent). Why stage 1 with
# precomputed g got 2% slower at B1 T8192 with the blocked inverse while B8 and every in-kernel gate
# got faster (logs_h200_20261205/r1_means.log): Nsight Compute on stage 1 at B1 T8192, precomputed g,
# for the tree before it (.exp/old = git archive 534c998 kimiops) and main (.exp/main = git archive
# f31d788 kimiops), one launch over all 256 chunk slots x 32 heads (--parts 1, the grid prefill_round_ab.py
# times); the details pages (duration, issue-slot use, warp states) side by side. Carry .exp.
export PYTHONUNBUFFERED=1
T0=$(date +%s)
for t in old main; do
  left=$(( 540 - ($(date +%s) - T0) )); [ $left -lt 60 ] && break
  PYTHONPATH=$PWD/.exp/$t:$PWD/benchmarks timeout $left ncu -k regex:chunk_intra -c 1 --set full \
    -o $OUT/r3_ncu_intra_b1_g_$t python3 benchmarks/profile_kda_prefill.py --batch 1 --seq-len 8192 --parts 1 --calls 2 \
    > $OUT/r3_ncu_run_$t.log 2>&1
  echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/r3_ncu_run_$t.log
  ncu --import $OUT/r3_ncu_intra_b1_g_$t.ncu-rep --page details > $OUT/r3_ncu_intra_b1_g_${t}_details.txt 2>&1
  rm -f $OUT/r3_ncu_intra_b1_g_$t.ncu-rep
done
diff <(grep -E "Duration|Issue Slots Busy|Warp Cycles Per Issued|Eligible Warps|Achieved Occupancy|L2 Hit|DRAM Throughput" $OUT/r3_ncu_intra_b1_g_old_details.txt) \
     <(grep -E "Duration|Issue Slots Busy|Warp Cycles Per Issued|Eligible Warps|Achieved Occupancy|L2 Hit|DRAM Throughput" $OUT/r3_ncu_intra_b1_g_main_details.txt)
