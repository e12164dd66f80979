#!/bin/bash
# Sixty-seventh session, run 1 (carry .whl; needs an H200). About 5 minutes:
#   1. what the pool index costs at N = 64 and 128: decode_copy_structures.py --index (the decode kernel's tile
#      structure as a bare in-place scale, slot from pid / idx / idx past L1 / a line per head / idx after
#      cu_seqlens, against the decode kernel and a torch copy, one process, 5 rounds interleaved);
#   2. Nsight Compute on one N = 64 decode call (cu_seqlens form, table config): details page and the warp-stall
#      samples per source line (ncu_hot_lines.py);
#   3. the sixty-sixth session's gpu_round3.sh at AB_NS = 64 128: main's decode table N = 1, 8, 64 (ours vs FLA),
#      then decode_sliced_v2.patch and its A/B in both forms and its GPU tests (this applies the patch: last).
T0=$(date +%s)
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm,power.draw --format=csv > $OUT/card.log; cat $OUT/card.log
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD:$PWD/benchmarks
timeout 150 python3 benchmarks/tools/decode_copy_structures.py --index --ns 64 128 --rounds 5 > $OUT/index_cost.log 2>&1
echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/index_cost.log; cat $OUT/index_cost.log
timeout 150 ncu -k regex:recurrent -s 4 -c 1 --set full --cache-control none --clock-control none --import-source yes \
  -o /tmp/ncu_n64 python3 benchmarks/tools/profile_decode.py --n 64 > $OUT/ncu_run.log 2>&1
echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/ncu_run.log; tail -n 5 $OUT/ncu_run.log
if [ -f /tmp/ncu_n64.ncu-rep ]; then
  ncu --import /tmp/ncu_n64.ncu-rep --page details > $OUT/ncu_decode_n64_details.txt 2>&1
  ncu --import /tmp/ncu_n64.ncu-rep --page source --csv --print-source cuda,sass > /tmp/ncu_src.csv 2>&1
  python3 benchmarks/tools/ncu_hot_lines.py /tmp/ncu_src.csv --top 30 > $OUT/ncu_decode_n64_hot_lines.txt 2>&1
  grep -E "Duration|DRAM Throughput|Memory Throughput|Achieved Occupancy|Registers Per|Elapsed Cycles|SM Frequency|DRAM Frequency" \
    $OUT/ncu_decode_n64_details.txt | head -20
  head -n 25 $OUT/ncu_decode_n64_hot_lines.txt
fi
echo "ncu done after $(( $(date +%s) - T0 )) s"
AB_NS="64 128" bash benchmarks/results/logs_20261207_s66/scripts/gpu_round3.sh
echo "all done after $(( $(date +%s) - T0 )) s"
