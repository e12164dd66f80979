#!/bin/bash
# Fifty-ninth session, run 3: run 2 timed one 3000-token prompt (pipelined parts) 2.4-2.6% faster with the flag
# on than off in .exp/zend (the zeros stored after the walk) and not in .exp/zstart (before it); the parts'
# chunk loop compiles to the same 801 instructions in another order (offline sm_90). Is that the loop's
# schedule? One prompt with no padding rows (the flag changes only the compile): 3000, 8192, 32768 tokens.
export PYTHONUNBUFFERED=1
for r in 0 1; do
  for t in zend zstart; do
    PYTHONPATH=$PWD/.exp/$t:$PWD/benchmarks timeout 130 python3 benchmarks/tools/zero_padding_rows_ab.py --rounds 3 \
      --cases 1x3000_pad,1x8192,1x32768 > $OUT/parts_${t}_$r.log 2>&1
    echo "rc $?" >> $OUT/parts_${t}_$r.log
  done
done
grep -H "on/off\|^rc" $OUT/parts_*.log | sed 's/ (rounds.*//'
