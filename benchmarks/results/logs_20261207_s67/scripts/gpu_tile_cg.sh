#!/bin/bash
# Sixty-seventh session: decode_tile_cg.patch (flag c: the state tile read past L1 with .cg, so the index's and
# cu_seqlens' lines can stay in L1 for the SM's next programs) against the tables' configs, decode_config_ab.py,
# both forms, N = 64 and 128, same slots then cold; the patch is reverted at the end. About 1 minute.
T0=$(date +%s)
S=benchmarks/results/logs_20261207_s67/scripts
git apply $S/decode_tile_cg.patch || { echo "tile_cg patch failed"; exit 1; }
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD:$PWD/benchmarks
for c in same cold; do
  CF=""; [ $c = cold ] && CF="--cold"
  for form in varlen batch; do
    if [ $form = varlen ]; then F=""; C="8x1h 8x1hc 8x1 8x1c"; else F="--batch"; C="8x1he 8x1hec 8x1e 8x1ec"; fi
    L=$OUT/ab_tilecg_${form}_$c.log
    timeout 100 python3 benchmarks/tools/decode_config_ab.py --rounds 3 --ns 64 128 $F $CF --configs $C > $L 2>&1
    echo "rc $? after $(( $(date +%s) - T0 )) s" >> $L; grep -E "N=|rc " $L
  done
done
git checkout -- kimiops benchmarks/bench_kda_decode.py benchmarks/tools/decode_config_ab.py
