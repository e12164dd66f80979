set -u
export PYTHONUNBUFFERED=1
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w"; done
export PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site
git log --oneline -1 > $OUT/r1_commit.txt 2>/dev/null
timeout 200 python3 benchmarks/tools/prefill_part_layouts.py --cases B1_T8192 --eager \
  --layouts "u4;u8;u16;16,32|64|32,16;8,16,32|64|32,16,8;16|32|16;32|64|32;|64|16;16|64|" > $OUT/r1_part_layouts_t8192.log 2>&1; echo rc=$?
cat $OUT/r1_part_layouts_t8192.log | grep -v "^$" | tail -40
timeout 90 python3 benchmarks/tools/sm_clock_phases.py --cases B1_T8192 > $OUT/r1_sm_clock_phases.log 2>&1; echo rc=$?
cat $OUT/r1_sm_clock_phases.log
timeout 240 python3 benchmarks/tools/prefill_part_layouts.py --cases B1_T32768 \
  --layouts "u4;u8;u16;u32;16,32,64|128|64,32,16;16,32|64|32,16;8,16,32,64|128|64,32,16,8;32|128|32" > $OUT/r1_part_layouts_t32768.log 2>&1; echo rc=$?
grep graph $OUT/r1_part_layouts_t32768.log; grep -c "True" $OUT/r1_part_layouts_t32768.log; grep "False" $OUT/r1_part_layouts_t32768.log | head
