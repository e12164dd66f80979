set -u
export PYTHONUNBUFFERED=1
PYTHONPATH=$PWD timeout 300 python3 benchmarks/tools/decode_early_state.py --ns 1 2 8 64 128 > $OUT/r3_decode_early_state.log 2>&1; echo rc=$?; cat $OUT/r3_decode_early_state.log
KIMIOPS_DECODE_PDL_MODE=2 PYTHONPATH=$PWD timeout 200 python3 -m pytest -q -m gpu tests/kda/test_recurrent_kernel.py tests/kda/test_backend.py -p no:cacheprovider -x > $OUT/r3_pytest_mode2.log 2>&1; echo rc=$?; tail -15 $OUT/r3_pytest_mode2.log
