set -u
export PYTHONUNBUFFERED=1
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w"; done
export PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site
T=benchmarks/tools/prefill_part_layouts.py
timeout 200 python3 $T --cases B8_T1024,B4_T4096,varlen7_16384,B1_T256 --rounds 3 --layouts "u1;u1@num_stages=4" > $OUT/r3_one_part_stages.log 2>&1; echo rc=$?
timeout 150 python3 $T --cases B1_T1024,B1_T4096 --rounds 3 --layouts "u1@num_stages=4;u2@num_stages=4;u4@num_stages=4;u8@num_stages=4" > $OUT/r3_layouts_t1024_t4096.log 2>&1; echo rc=$?
timeout 200 python3 $T --cases B1_T8192,B1_T16384 --rounds 2 --layouts "u4@num_stages=4;u8@num_stages=4;u16@num_stages=4" > $OUT/r3_layouts_t8192_t16384.log 2>&1; echo rc=$?
grep -h "graph\|False" $OUT/r3_*.log
