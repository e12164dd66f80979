#!/bin/bash
# Run 1 (forty-fifth session): main (f31d788) on the H200: every GPU test outside
# tests/kda/test_chunk_kernel.py (that file passed on this stage 1 in the forty-fourth session's run 2),
# in one process, then `kimiops bench decode` beside FLA.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $OUT/r1_gpu.log
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/fla .whl/fla_core-0.6.0-py3-none-any.whl
PYTHONPATH=$PWD timeout 470 python3 -m pytest -q -p no:cacheprovider tests --ignore=tests/kda/test_chunk_kernel.py \
  > $OUT/r1_pytest_all_but_chunk_kernel.log 2>&1
echo "rc $?" >> $OUT/r1_pytest_all_but_chunk_kernel.log
tail -n 4 $OUT/r1_pytest_all_but_chunk_kernel.log
PYTHONPATH=$PWD:/tmp/fla timeout 100 python3 -m kimiops.cli bench decode --out $OUT/bench > $OUT/r1_bench_decode.log 2>&1
echo "rc $?" >> $OUT/r1_bench_decode.log
tail -n 12 $OUT/r1_bench_decode.log
(cd $OUT && tar czf r1_bench_raw.tgz bench && rm -rf bench)
