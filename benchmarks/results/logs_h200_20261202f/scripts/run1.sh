#!/bin/bash
# run 1: the three stacked stage-1 candidates and a register cap against main, prefill_round_ab.py
# one process per tree, alternating over two rounds (accuracy in the first), means per tree.
# Trees (.exp/<name>, copies of kimiops/): main (6d51f1e); log2 (g log2 e split once, exp2 of span
# sums); stash (log2 + the g stash for precomputed g); fp16f (stash + fp16 factor products);
# fp16c (fp16f with maxnreg 128 for stage 1: 8 programs per SM).
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w"; done
mkdir -p $OUT/r1
bash benchmarks/tools/prefill_ab_rounds.sh $OUT/r1 r1 2 main log2 stash fp16f fp16c
cp $OUT/r1/r1_means.log $OUT/
tar -czf $OUT/r1_round_ab_logs.tgz -C $OUT/r1 . && rm -r $OUT/r1
