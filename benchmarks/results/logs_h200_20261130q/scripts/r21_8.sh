set -u
export PYTHONUNBUFFERED=1
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w" 2>/dev/null; done
T=benchmarks/tools/prefill_part_layouts.py
# the edges of the rule: batches at 8 heads (one part by max_seqs), one prompt at 64 heads (one part by below_pairs)
PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site timeout 200 python3 $T --heads 8 --cases B2_T4096,B4_T4096,varlen2_uneven --layouts "rule;u4" > $OUT/r8_layouts_8_heads.log 2>&1; echo rc=$?
PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site timeout 150 python3 $T --heads 64 --cases B1_T8192 --layouts "rule;u4" > $OUT/r8_layouts_64_heads.log 2>&1; echo rc=$?
grep -h "graph\|parts \[\|Error" $OUT/r8_layouts_*.log
