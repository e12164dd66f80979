#!/bin/bash
# Fifty-ninth session, run 2: where the padding rows are zeroed. Run 1 timed the flag's cost at +2.1-2.6% on
# one 8000-token prompt at 4 heads (segments: the zeros were stored at the end of the last segment's walk, on
# the call's critical path). Trees (carry them): .exp/zend (main as run 1) and .exp/zstart (the zeros stored
# before the walk); zero_padding_rows_ab.py per tree, 2 processes each, alternated.
export PYTHONUNBUFFERED=1
for r in 0 1; do
  for t in zend zstart; do
    PYTHONPATH=$PWD/.exp/$t:$PWD/benchmarks timeout 130 python3 benchmarks/tools/zero_padding_rows_ab.py --rounds 3 \
      > $OUT/zero_rows_${t}_$r.log 2>&1
    echo "rc $?" >> $OUT/zero_rows_${t}_$r.log
  done
done
grep -H "on/off\|^kimiops\|^rc" $OUT/zero_rows_*.log | sed 's/ (rounds.*//'
