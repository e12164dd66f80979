#!/bin/bash
# ns per call of the fast path's check: main's no_launch_hooks() against the branch's fast_launch_allowed().
# bash fast_launch_allowed_ns.sh <main tree> <branch tree>   (run from a directory holding neither)
for i in 1 2; do for tree in "$@"; do CUDA_VISIBLE_DEVICES= PYTHONPATH=$tree python3 -c "
import timeit, kimiops.launch as kl
f = getattr(kl, 'fast_launch_allowed', None) or kl.no_launch_hooks
n = 1000000
best = min(timeit.repeat(f, number=n, repeat=7)) / n * 1e9
print('$tree', kl.__file__, f.__name__, f'{best:.1f} ns per call')
"; done; done
