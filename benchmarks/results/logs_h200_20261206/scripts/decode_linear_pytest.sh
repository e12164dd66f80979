#!/bin/bash
# Fifty-third session, runs 4-6 on the H200 (written down after the fact; what each call ran):
# run 4 (carry .whl): the issue-4 decode table beside FLA 0.6
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w" 2>/dev/null; done
export PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site PYTHONUNBUFFERED=1
timeout 300 python3 benchmarks/bench_kda_decode.py --out $OUT --ns 1 2 8 64 128 --no-sweep 2>&1 | tee $OUT/bench_decode.log
# run 5: the issue-5 grid, re-timing the committed sm90 table's kernel choices against cuBLAS (no sweep)
export PYTHONPATH=$PWD:$PWD/benchmarks
timeout 400 python3 benchmarks/bench_linear.py --out $OUT --table-out $OUT/sm90_retimed.json \
  --triton-from kimiops/gemm/tables/sm90.json 2>&1 | tee $OUT/bench_linear.log
# run 6: the whole test suite on the GPU
timeout 540 python3 -m pytest -q -p no:cacheprovider -x --durations=15 tests 2>&1 | tee $OUT/pytest_gpu_all.log
