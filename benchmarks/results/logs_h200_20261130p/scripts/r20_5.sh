set -u
export PYTHONUNBUFFERED=1
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w" 2>/dev/null; done
export PYTHONPATH=$PWD:/tmp/site
timeout -s ABRT 390 python3 -X faulthandler -m pytest -v -s -m gpu tests/integrations -p no:cacheprovider -o faulthandler_timeout=170 --durations=3 > $OUT/r5_pytest_integrations.log 2>&1; echo rc=$?; grep -v "^  File\|^    " $OUT/r5_pytest_integrations.log | tail -30; grep -n "File \"/" $OUT/r5_pytest_integrations.log | head -30
