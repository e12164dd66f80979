#!/bin/bash
# The Gluon state stage's first GPU round (chunk_state_gluon.py; docs/prefill.md, "Where to go
# next"), one device call of ~6 minutes, logs under <out>: its GPU tests against the Triton kernel,
# the state stage alone in both kernels on the same scratch (state_gluon_ab.py), and, with `table`,
# the ten prefill cells with it switched on (bench_kda_prefill.py --state gluon=1, FLA 0.6 in the
# same process; fla-core under /tmp/site, as for prefill_ab_rounds.sh).
#   bash benchmarks/tools/gluon_state_round.sh <out> [table]
set -u
out=$1; shift
export PYTHONUNBUFFERED=1
t0=$(date +%s)
PYTHONPATH=$PWD timeout 200 python3 -m pytest -q tests/kda/test_chunk_state_gluon.py -p no:cacheprovider \
  > "$out/gluon_pytest.log" 2>&1
echo "rc $? after $(( $(date +%s) - t0 )) s" >> "$out/gluon_pytest.log"
tail -4 "$out/gluon_pytest.log"
PYTHONPATH=$PWD:$PWD/benchmarks timeout 240 python3 benchmarks/tools/state_gluon_ab.py > "$out/gluon_state_ab.log" 2>&1
echo "rc $? after $(( $(date +%s) - t0 )) s" >> "$out/gluon_state_ab.log"
cat "$out/gluon_state_ab.log"
if [ "${1:-}" = table ]; then
  for m in gate g; do
    PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site timeout 150 python3 benchmarks/bench_kda_prefill.py --no-sweep \
      --state gluon=1 --modes $m --out "$out" > "$out/gluon_table_$m.log" 2>&1
    echo "rc $? after $(( $(date +%s) - t0 )) s" >> "$out/gluon_table_$m.log"
    tail -9 "$out/gluon_table_$m.log"
  done
fi
