set -u
export PYTHONUNBUFFERED=1
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w" 2>/dev/null; done
export PYTHONPATH=$PWD:/tmp/site
timeout 100 python3 -m pytest -q -m gpu tests/kda/test_recurrent_kernel.py tests/test_devices.py -p no:cacheprovider -rs > $OUT/r3_pytest_gpu_decode.log 2>&1; echo rc=$?; tail -3 $OUT/r3_pytest_gpu_decode.log
timeout 440 python3 -m pytest -q -m gpu tests/integrations -p no:cacheprovider -rs --durations=5 > $OUT/r3_pytest_gpu_integrations.log 2>&1; echo rc=$?; tail -12 $OUT/r3_pytest_gpu_integrations.log
