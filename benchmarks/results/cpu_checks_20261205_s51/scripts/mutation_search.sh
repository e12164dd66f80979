#!/bin/bash
# Two mutations of the fifty-first session's change, each in a scratch worktree of HEAD, then the CPU tests
# that should see it (expect failures): (a) the sort's block back to the next power of two
# (ORDER_MIN_BLOCK = 1): the replay tests; (b) stage 1's sequence search stopping one step early (while
# hi - lo > 2): the varlen kernel tests and the search's own (test_locate_chunk.py) in the interpreter.
# Run from the repository root.
wt=/tmp/mutation_search_wt
for m in a b; do
  rm -rf $wt; git worktree prune; git worktree add -q --detach $wt HEAD
  if [ $m = a ]; then
    sed -i 's/^ORDER_MIN_BLOCK = 32/ORDER_MIN_BLOCK = 1/' $wt/kimiops/kda/kernels/chunk_layout.py
    tests="tests/kda/test_prefill_replay.py"; k=""
  else
    sed -i 's/        while hi - lo > 1:/        while hi - lo > 2:/' $wt/kimiops/kda/kernels/chunk_intra.py
    tests="tests/kda/test_chunk_kernel.py tests/kda/test_locate_chunk.py"; k="varlen or sequence_rows or malformed"
  fi
  echo "== mutation $m: $(git -C $wt diff --stat | tail -n 1)"
  (cd $wt && TRITON_INTERPRET=1 python3 -m pytest -q -p no:cacheprovider $tests ${k:+-k "$k"} 2>&1 | grep -E "^FAILED|passed|failed" | tail -n 12)
done
rm -rf $wt; git worktree prune
