set -u
for w in .whl/transformers*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w"; done
export PYTHONUNBUFFERED=1
PYTHONPATH=$PWD:/tmp/site timeout 500 python3 -m pytest -q -m gpu tests -p no:cacheprovider > $OUT/r5_pytest_gpu_all.log 2>&1; echo rc=$?; grep -E "passed|failed|FAILED|Error" $OUT/r5_pytest_gpu_all.log | tail -15
