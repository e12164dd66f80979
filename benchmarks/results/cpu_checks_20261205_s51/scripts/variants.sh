#!/bin/bash
# prefill_compile_variants_cpu.py on this tree and on BEFORE (a worktree of the baseline, 9daec9b), three
# workloads each. Run from the repository root: BEFORE=<worktree> bash .../scripts/variants.sh
for args in "--heads 32" "--heads 4" "--heads 32 --max-seqs 64 --max-tokens 1024"; do
  for tree in $PWD ${BEFORE:?a worktree of 9daec9b}; do
    echo "== $args, tree $(git -C $tree log -1 --format=%h)$( [ -n "$(git -C $tree status --porcelain --untracked-files=no)" ] && echo '+working tree')"
    python3 benchmarks/tools/prefill_compile_variants_cpu.py $args --tree $tree
  done
done
