#!/bin/bash
# run 3: the working tree as run 2: the gate's table (run 2's was cut at 200 s before its varlen cell),
# then every GPU test of tests/kda/test_chunk_kernel.py (marked and `device`) in the time left.
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w"; done
export PYTHONUNBUFFERED=1
T0=$(date +%s)
PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site timeout 240 python3 benchmarks/bench_kda_prefill.py --no-sweep --modes gate --out $OUT > $OUT/r3_bench_prefill_gate.log 2>&1
echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/r3_bench_prefill_gate.log
tail -9 $OUT/r3_bench_prefill_gate.log
left=$(( 575 - ($(date +%s) - T0) ))
echo "tests with $left s left"
OUT=$OUT/s3 TEST_MARK= TEST_TIMEOUT=$left TESTS="tests/kda/test_chunk_kernel.py" bash benchmarks/gpu_round.sh tests
cp $OUT/s3/pytest_gpu.log $OUT/r3_pytest_chunk_kernel.log; rm -r $OUT/s3
