set -u
export PYTHONUNBUFFERED=1
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w" 2>/dev/null; done
export PYTHONPATH=$PWD:/tmp/site
python3 -c "import transformers, sys; print(transformers.__version__, transformers.__file__)" > $OUT/r4_env.txt 2>&1
timeout -s ABRT 420 python3 -X faulthandler -m pytest -q -s -m gpu tests/integrations -k trained_model_bf16 -p no:cacheprovider -o faulthandler_timeout=200 --durations=3 > $OUT/r4_pytest_trained.log 2>&1; echo rc=$?; tail -40 $OUT/r4_pytest_trained.log
