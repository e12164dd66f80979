#!/bin/bash
# run 3 (tree: HEAD + stage 1's exponentials as ex2.approx.ftz): the prefill table side by side with FLA,
# then the prefill GPU tests (-m gpu) for the time left
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/fla "$w"; done
export PYTHONUNBUFFERED=1
s0=$(date +%s)
PYTHONPATH=$PWD:/tmp/fla timeout 370 python3 benchmarks/bench_kda_prefill.py --no-sweep --out $OUT > $OUT/r3_bench_prefill.log 2>&1
echo "rc $? after $(( $(date +%s) - s0 )) s" >> $OUT/r3_bench_prefill.log
left=$(( 585 - ($(date +%s) - s0) ))
PYTHONPATH=$PWD timeout $left python3 -m pytest -v -p no:cacheprovider -m gpu tests/kda/test_chunk_kernel.py tests/kda/test_dot_operands.py > $OUT/r3_pytest_prefill_gpu.log 2>&1
echo "rc $? after $(( $(date +%s) - s0 )) s" >> $OUT/r3_pytest_prefill_gpu.log
tail -n 30 $OUT/r3_bench_prefill.log; grep -c PASSED $OUT/r3_pytest_prefill_gpu.log; grep -E "FAILED|ERROR" $OUT/r3_pytest_prefill_gpu.log | head; tail -n 3 $OUT/r3_pytest_prefill_gpu.log
