#!/bin/bash
# Prepared in the forty-eighth session (no H200 was lent; the sub-blocks of 4 were timed on an H100 only,
# logs_h100_20261205/). One command (~9 min) for the next H200: the issue's table on main (stage 1's inverse
# on sub-blocks of 4, since d275cfc) beside FLA 0.6, both gate modes, then the geomean over the ten cells;
# then the GPU tests of stage 1's inverse and of the chunk kernels while time is left. Carry .whl.
export PYTHONUNBUFFERED=1
T0=$(date +%s)
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv > $OUT/gpu.log
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/fla_core-0.6.0-py3-none-any.whl
mkdir -p $OUT/json
for m in g gate; do
  PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site timeout 215 python3 benchmarks/bench_kda_prefill.py --no-sweep \
    --modes $m --out $OUT/json > $OUT/bench_prefill_$m.log 2>&1
  echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/bench_prefill_$m.log
done
python3 benchmarks/tools/prefill_table_geomean.py $OUT/json/kda_prefill_*.json > $OUT/table_geomeans.log 2>&1
cat $OUT/table_geomeans.log
left=$(( 560 - ($(date +%s) - T0) ))
[ $left -gt 30 ] && PYTHONPATH=$PWD timeout $left python3 -m pytest -q -p no:cacheprovider \
  tests/kda/test_diag_block_inverse.py tests/kda/test_chunk_kernel.py > $OUT/pytest_inverse_chunk_kernel.log 2>&1
echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/pytest_inverse_chunk_kernel.log; tail -n 3 $OUT/pytest_inverse_chunk_kernel.log
