set -u
export PYTHONUNBUFFERED=1
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w" 2>/dev/null; done
T=benchmarks/tools/prefill_part_layouts.py
C=B2_T4096,B3_T4096,varlen2_8192,varlen2_uneven,varlen3_12288
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv > $OUT/r1_gpu.txt
PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site timeout 260 python3 $T --cases $C --modes g --layouts "rule;u1;u2" > $OUT/r1_main_layouts.log 2>&1; echo main rc=$?
cd .exp/crp
PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site timeout 300 python3 $T --cases $C,B1_T8192 --modes g --layouts "rule;u1;u2" > $OUT/r1_branch_layouts.log 2>&1; echo branch rc=$?
grep -h "graph\|False" $OUT/r1_*.log
