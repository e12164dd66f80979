#!/bin/bash
# Run 2 of the fiftieth session: main on sub-blocks of 4 (the forty-eighth session's stage 1), every GPU test
# outside tests/kda/test_chunk_kernel.py in one process (that file passed on this stage 1 in the forty-ninth
# session; the rest last ran whole on f31d788, before it), then `kimiops bench decode` beside FLA 0.6.
# Carry .whl.
export PYTHONUNBUFFERED=1
T0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $OUT/r2_gpu.log
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/fla .whl/fla_core-0.6.0-py3-none-any.whl
PYTHONPATH=$PWD timeout 450 python3 -m pytest -q -p no:cacheprovider tests --ignore=tests/kda/test_chunk_kernel.py \
  > $OUT/r2_pytest_all_but_chunk_kernel.log 2>&1
echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/r2_pytest_all_but_chunk_kernel.log
tail -n 4 $OUT/r2_pytest_all_but_chunk_kernel.log
left=$(( 585 - ($(date +%s) - T0) ))
PYTHONPATH=$PWD:/tmp/fla timeout $left python3 -m kimiops.cli bench decode --out $OUT/bench > $OUT/r2_bench_decode.log 2>&1
echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/r2_bench_decode.log
tail -n 14 $OUT/r2_bench_decode.log
(cd $OUT && tar czf r2_bench_raw.tgz bench && rm -rf bench)
