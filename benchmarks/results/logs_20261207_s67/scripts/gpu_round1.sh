#!/bin/bash
# Sixty-seventh session, run 1 (carry .whl; needs an H200). About 6 minutes:
#   1. what the pool index costs at N = 64 and 128: decode_copy_structures.py --index (the decode kernel's tile
#      structure as a bare in-place scale, slot from pid / idx / idx past L1 / a line per head / idx after
#      cu_seqlens, and L2 prefetches before the PDL wait, against the decode kernel and a torch copy, one
#      process, 5 rounds interleaved);
#   2. Nsight Compute on one N = 64 decode call (cu_seqlens form, table config): details page and the warp-stall
#      samples per source line (ncu_hot_lines.py);
#   3. decode_prefetch_first.patch (flag p: programs with pid < 32 x SMs prefetch their state tile to L2 between
#      the PDL release and the wait) and decode_config_ab.py of the tables' configs with and without it, both
#      forms, N = 64 and 128; the patch is then reverted;
#   4. the sixty-sixth session's gpu_round3.sh at AB_NS = 64 128: main's decode table N = 1, 8, 64 (ours vs FLA),
#      then decode_sliced_v2.patch and its A/B in both forms and its GPU tests (this applies the patch: last).
#      SKIP_ROUND3=1 leaves step 4 out (it ran on an H100 in the sixty-sixth session).
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
git apply benchmarks/results/logs_20261207_s67/scripts/decode_prefetch_first.patch || echo "prefetch patch failed"
for form in varlen batch; do
  if [ $form = varlen ]; then F=""; C="8x1h 8x1hp 8x1 8x1p"; else F="--batch"; C="8x1he 8x1hep 8x1e 8x1ep"; fi
  timeout 130 python3 benchmarks/tools/decode_config_ab.py --rounds 3 --ns 64 128 $F --configs $C > $OUT/ab_prefetch_$form.log 2>&1
  echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/ab_prefetch_$form.log; cat $OUT/ab_prefetch_$form.log
done
git checkout -- kimiops benchmarks/bench_kda_decode.py benchmarks/tools/decode_config_ab.py
[ -n "$SKIP_ROUND3" ] || AB_NS="64 128" bash benchmarks/results/logs_20261207_s66/scripts/gpu_round3.sh
echo "all done after $(( $(date +%s) - T0 )) s"
