#!/bin/bash
# Run 3 (forty-first session): the state stage's chunk step without its barriers after the last
# product, trees alternating in processes, two rounds (prefill_ab_rounds.sh). Trees (.exp/<tree>,
# carried): main = git archive HEAD kimiops; gce = main with S^T diag(gC) taken after S's split
# (gC's layout conversion early) and the update as fma(kv, inv_v, Sg); st1 = gce + o stored by
# inline PTX from the accumulator layout (no conversion); st2 = st1 with o's sum in the PTX.
bash benchmarks/tools/prefill_ab_rounds.sh $OUT r3 2 main gce st1 st2 > $OUT/r3_summary.log 2>&1
cd $OUT && tar czf r3_round_ab_logs.tgz r3_round_ab_*.log && rm r3_round_ab_*.log
cat $OUT/r3_summary.log
