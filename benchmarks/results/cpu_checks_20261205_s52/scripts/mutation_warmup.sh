#!/bin/bash
# The warm-up's coverage test against two mutants of kimiops/kda/warmup.py (each in a scratch copy of the
# tree): without the long prompts (no pipelined parts or segments), and without the batches past 32
# requests (no sort block 64). Each must fail the stubbed-launch test in every gate mode.
set -u
root=$(pwd)
for m in no_long_prompts no_large_sort_blocks; do
  rm -rf /tmp/mut_$m && mkdir -p /tmp/mut_$m && git -C "$root" archive HEAD | tar -x -C /tmp/mut_$m
  f=/tmp/mut_$m/kimiops/kda/warmup.py
  case $m in
    no_long_prompts) sed -i 's/^_LONG_PROMPTS = .*/_LONG_PROMPTS = ()/' $f ;;
    no_large_sort_blocks) sed -i 's/    while block + 1 <= max_requests:/    while False:/' $f ;;
  esac
  echo "== $m: $(diff <(git -C "$root" show HEAD:kimiops/kda/warmup.py) $f | grep '^>' )"
  (cd /tmp/mut_$m && python3 -m pytest -q -p no:cacheprovider tests/kda/test_warmup.py -k no_new_kernel_variant 2>&1 | tail -n 1)
done
