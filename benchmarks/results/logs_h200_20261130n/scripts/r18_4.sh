set -u
export PYTHONUNBUFFERED=1
PYTHONPATH=$PWD timeout 300 python3 benchmarks/tools/decode_early_state.py --ns 1 2 8 16 64 128 256 > $OUT/r4_decode_prefetch.log 2>&1; echo rc=$?; cat $OUT/r4_decode_prefetch.log
KIMIOPS_DECODE_PDL_MODE=3 PYTHONPATH=$PWD timeout 200 python3 -m pytest -q -m gpu tests/kda/test_recurrent_kernel.py tests/kda/test_backend.py -p no:cacheprovider > $OUT/r4_pytest_mode3.log 2>&1; echo rc=$?; tail -3 $OUT/r4_pytest_mode3.log
