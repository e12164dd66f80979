set -u
for w in .whl/fla_core*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/fla "$w"; done
export PYTHONUNBUFFERED=1
(time PYTHONPATH=$PWD timeout 100 python3 -m kimiops.cli demo --no-progress) > $OUT/r11_demo.log 2>&1; tail -15 $OUT/r11_demo.log
PYTHONPATH=$PWD:/tmp/fla timeout 150 python3 benchmarks/tools/prefill_short_prompts.py > $OUT/r11_prefill_short_prompts.log 2>&1; cat $OUT/r11_prefill_short_prompts.log
