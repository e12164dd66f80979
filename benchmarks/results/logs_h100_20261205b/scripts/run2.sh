#!/bin/bash
# Run 2 (same warm H100 as run 1, 2026-12-05 forty-ninth session, tree f4e2f45): run 1's g table was cut by
# its 215 s timeout before the varlen cell (the first call compiled everything), and its pytest by the
# 560 s guard; this reruns test_chunk_kernel.py and test_diag_block_inverse.py (cut again at 330 s, see
# run 3) and the g table with a longer timeout. Carry .whl.
export PYTHONUNBUFFERED=1; T0=$(date +%s)
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/fla_core-0.6.0-py3-none-any.whl
mkdir -p $OUT/json
PYTHONPATH=$PWD timeout 330 python3 -m pytest -q -p no:cacheprovider tests/kda/test_chunk_kernel.py \
  tests/kda/test_diag_block_inverse.py > $OUT/pytest_inverse_chunk_kernel.log 2>&1
echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/pytest_inverse_chunk_kernel.log
PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site timeout 200 python3 benchmarks/bench_kda_prefill.py --no-sweep --modes g \
  --out $OUT/json > $OUT/bench_prefill_g.log 2>&1
echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/bench_prefill_g.log
