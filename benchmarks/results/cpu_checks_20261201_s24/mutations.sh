#!/usr/bin/env bash
# Injected errors in the speculative decode kernel, each run against tests/kda/test_fla_keywords.py
# (CPU, interpreter) and restored: how many tests catch each.
set -u
f=kimiops/kda/kernels/recurrent.py
cp $f /tmp/rec.bak
run() { echo "== $1"; timeout 600 python3 -m pytest -q tests/kda/test_fla_keywords.py -p no:cacheprovider 2>&1 | tail -1; cp /tmp/rec.bak $f; }
sed -i 's/slot = tl.load(ht_idx + n64 \* s_idx + (t - bos))/slot = tl.load(ht_idx + n64 * s_idx + (t - bos) * 0)/' $f
run "every token's state written to column 0"
sed -i 's/            first = tl.load(num_acc + i_n).to(tl.int64) - 1/            first = tl.load(num_acc + i_n).to(tl.int64)/' $f
run "start slot read from column num_accepted instead of num_accepted - 1"
echo "== unmutated"; timeout 600 python3 -m pytest -q tests/kda/test_fla_keywords.py -p no:cacheprovider 2>&1 | tail -1
