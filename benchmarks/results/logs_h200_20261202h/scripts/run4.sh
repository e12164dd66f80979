#!/bin/bash
# Run 4 (forty-first session): gcp = main with S^T diag(gC) taken after S's split and gC loaded one
# chunk step ahead (run 3's gce without its exposed load), against main; two alternating rounds.
bash benchmarks/tools/prefill_ab_rounds.sh $OUT r4 2 main gcp > $OUT/r4_summary.log 2>&1
cd $OUT && tar czf r4_round_ab_logs.tgz r4_round_ab_*.log && rm r4_round_ab_*.log
grep -h "state" $OUT/r4_summary.log | head -0; cat $OUT/r4_summary.log | tail -12
