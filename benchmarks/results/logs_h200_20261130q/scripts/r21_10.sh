set -u
export PYTHONUNBUFFERED=1
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w" 2>/dev/null; done
# dispatch order of the wide state tiles: a head's two V tiles adjacent (they read the same w / qg / kg tiles)
PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site timeout 120 python3 benchmarks/tools/state_config_stages.py --cases B1_T8192,B4_T4096,B8_T1024 --configs "v_tiles_adjacent=0;v_tiles_adjacent=1" > $OUT/r10_adjacent_stages.log 2>&1; echo rc=$?
grep -v Warning $OUT/r10_adjacent_stages.log
PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site timeout 150 python3 benchmarks/tools/prefill_part_layouts.py --cases B1_T8192,B1_T32768 --layouts "rule;rule@v_tiles_adjacent=1" > $OUT/r10_layouts_adjacent.log 2>&1; echo rc=$?
grep -h "graph\|False\|Error" $OUT/r10_layouts_adjacent.log
