#!/bin/bash
# Per layout form of test_elastic_replay_launches_what_the_full_path_launches: how many of its later calls
# a recording replays and how many new recordings it needs ("RL form track replayed learned"), on the tree
# given (default: this one) -- run it on main and on a worktree of 7ee207b. A temporary copy of the test
# prints the counts beside its assertion; the copy is deleted.
tree=${1:-$PWD}
cd "$tree" || exit 1
tmp=tests/kda/test_prefill_replay_counts_tmp.py
sed '/^    assert replayed >= len(later)/i\    print("RL", form, track, replayed, learned)' tests/kda/test_prefill_replay.py > $tmp
echo "tree $(git log -1 --format=%h)"
TRITON_INTERPRET=1 python3 -m pytest -q -s -p no:cacheprovider $tmp -k launches_what_the_full 2>&1 | grep -o "RL.*\|[0-9]* passed.*"
rm -f $tmp
