#!/bin/bash
# A/B of source trees on the GPU: prefill_round_ab.py once per tree and round, trees alternating in
# separate processes (accuracy in the first round), logs <out>/<prefix>_round_ab_<tree>_<round>.log,
# then their means (prefill_round_means.py) into <out>/<prefix>_means.log. Each tree is a copy of a
# `kimiops/` under .exp/<tree> (e.g. `git archive <rev> kimiops | tar -x -C .exp/<tree>`; carry it).
# Run from the repository root, with fla-core installed under /tmp/site (AB_ARGS: further arguments of
# prefill_round_ab.py, e.g. AB_ARGS="--cases varlen7_16384,varlen64_128 --modes g,gate"):
#   bash benchmarks/tools/prefill_ab_rounds.sh <out> <prefix> <rounds> <tree> [<tree> ...]
set -u
out=$1 prefix=$2 rounds=$3; shift 3
export PYTHONUNBUFFERED=1
for ((r = 0; r < rounds; r++)); do
  acc=""; [ $r -gt 0 ] && acc="--no-accuracy"
  for t in "$@"; do
    s0=$(date +%s)
    PYTHONPATH=$PWD/.exp/$t:$PWD/benchmarks:/tmp/site timeout 150 python3 benchmarks/tools/prefill_round_ab.py $acc ${AB_ARGS:-} \
      > "$out/${prefix}_round_ab_${t}_$r.log" 2>&1
    echo "rc $? after $(( $(date +%s) - s0 )) s" >> "$out/${prefix}_round_ab_${t}_$r.log"
  done
done
grep -h "^kimiops\|^accuracy\|^rc" "$out/${prefix}"_round_ab_*.log
python3 benchmarks/tools/prefill_round_means.py "$out" "$prefix" "$@" | tee "$out/${prefix}_means.log"
