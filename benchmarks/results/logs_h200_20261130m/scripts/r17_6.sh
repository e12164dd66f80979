set -u
export PYTHONUNBUFFERED=1
PYTHONPATH=$PWD timeout 150 python3 benchmarks/bench_kda_prefill.py --ablate intra --modes gate,g --rows "default,pass-2" --rep 20 > $OUT/r6_ablate_gate.log 2>&1; echo rc=$?; grep ablate $OUT/r6_ablate_gate.log
PYTHONPATH=$PWD timeout 300 python3 -m pytest -q tests/gemm -p no:cacheprovider > $OUT/r6_pytest_gemm_cuda.log 2>&1; echo rc=$?; tail -2 $OUT/r6_pytest_gemm_cuda.log
