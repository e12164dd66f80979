set -u
export PYTHONUNBUFFERED=1
SC=$PWD/.exp/r15/sc
for tree in $PWD $SC $PWD $SC; do echo "== $tree"; timeout 100 python3 .exp/r15/repro.py $tree 2>&1; done > $OUT/r4_repro.log; cat $OUT/r4_repro.log
