set -u
for w in .whl/fla_core*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/fla "$w"; done
for w in .whl/transformers*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w"; done
export PYTHONUNBUFFERED=1
PYTHONPATH=$PWD:/tmp/fla timeout 150 python3 benchmarks/tools/prefill_short_prompts.py > $OUT/r5_prefill_short_prompts.log 2>&1; cat $OUT/r5_prefill_short_prompts.log
PYTHONPATH=$PWD:/tmp/site timeout 330 python3 -m pytest -q -m gpu tests -p no:cacheprovider > $OUT/r5_pytest_gpu_all.log 2>&1; tail -3 $OUT/r5_pytest_gpu_all.log
