#!/bin/bash
# run 3: the elastic replay of varlen prefill: GPU tests, then extend host time with new token counts
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w"; done
export PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site PYTHONUNBUFFERED=1
git log -1 --format=%H > $OUT/commit3.txt 2>/dev/null
timeout 330 python3 -m pytest -q -m gpu -x tests/kda/test_chunk_kernel.py -k "eager or repeated or fast_launch or graph" tests/kda/test_backend.py > $OUT/r3_pytest_gpu.log 2>&1
tail -5 $OUT/r3_pytest_gpu.log
timeout 200 python3 benchmarks/tools/extend_host_gpu.py --pieces > $OUT/r3_extend_host.log 2>&1
grep -v "^ " $OUT/r3_extend_host.log | head -60
