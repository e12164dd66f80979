#!/bin/bash
# Fifty-ninth session: on an H200 the prefill table on main first (the fifty-seventh session's
# h200_table_bounded.sh, RUN_S 360 s), then on any card the fifty-eighth session's padding-rows flag timed off
# and on (benchmarks/tools/zero_padding_rows_ab.py, 3 rounds, precomputed g and the in-kernel gate). Carry .whl.
export PYTHONUNBUFFERED=1
T0=$(date +%s)
RUN_S=360 bash benchmarks/results/logs_20261206_s57/scripts/h200_table_bounded.sh
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/fla_core-0.6.0-py3-none-any.whl 2>/dev/null
LEFT=$(( 570 - ($(date +%s) - T0) ))
PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site timeout $LEFT python3 benchmarks/tools/zero_padding_rows_ab.py --rounds 3 \
  > $OUT/zero_padding_rows_ab.log 2>&1
echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/zero_padding_rows_ab.log
cat $OUT/zero_padding_rows_ab.log
