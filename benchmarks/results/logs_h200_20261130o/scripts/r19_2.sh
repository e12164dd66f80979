set -u
export PYTHONUNBUFFERED=1
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w"; done
export PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site
T=benchmarks/tools/prefill_part_layouts.py
timeout 150 python3 $T --cases B1_T8192 --rounds 3 --layouts "u4;u8;u4@num_stages=4;u8@num_stages=4;u8@num_stages=2" > $OUT/r2_layouts_t8192.log 2>&1; echo rc=$?
timeout 200 python3 $T --cases B1_T32768 --layouts "u8;u16;u8@num_stages=4;u16@num_stages=4" > $OUT/r2_layouts_t32768.log 2>&1; echo rc=$?
timeout 150 python3 $T --cases B1_T2048,B1_T4096 --rounds 3 --layouts "u1;u2;u4;u2@num_stages=4;u4@num_stages=4" > $OUT/r2_layouts_t2048_t4096.log 2>&1; echo rc=$?
timeout 150 python3 $T --cases B1_T16384 --layouts "u4;u8;u16;u16@num_stages=4" > $OUT/r2_layouts_t16384.log 2>&1; echo rc=$?
grep -h "graph\|False" $OUT/r2_*.log
