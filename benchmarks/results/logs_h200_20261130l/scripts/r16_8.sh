set -u
for w in .whl/fla_core*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/fla "$w"; done
export PYTHONUNBUFFERED=1
PYTHONPATH=$PWD:/tmp/fla timeout 60 python3 .exp/r16/state_crossover.py 64 256 1024 2048 > $OUT/r8_state_default.log 2>&1; cat $OUT/r8_state_default.log | tail -5
PYTHONPATH=$PWD timeout 250 python3 -m pytest -q tests/kda/test_chunk_kernel.py tests/kda/test_ops.py -p no:cacheprovider > $OUT/r8_pytest_kda_chunk.log 2>&1; tail -3 $OUT/r8_pytest_kda_chunk.log
