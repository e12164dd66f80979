#!/bin/bash
# Run 4 (same warm H100, 252 s of device time left): the cold-start cases run 1 did not reach, ours only
# (FLA's first call of a prefill case took ~90 s in run 1, too long for what was left).
PYTHONPATH=$PWD:$PWD/benchmarks timeout 200 python3 benchmarks/tools/first_call_compile.py \
  --cases prefill_g_B1_T512,prefill_g_varlen7,decode_N1,decode_N64 > $OUT/r4_first_call_compile_ours_rest.log 2>&1
echo "rc $?" >> $OUT/r4_first_call_compile_ours_rest.log
cat $OUT/r4_first_call_compile_ours_rest.log
