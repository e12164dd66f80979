set -u
for w in .whl/fla_core*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/fla "$w"; done
export PYTHONUNBUFFERED=1
PYTHONPATH=$PWD:/tmp/fla timeout 150 python3 benchmarks/bench_kda_prefill.py --no-sweep --rep 20 --modes gate --cases B1_T32768,varlen7_16384 --out $OUT > $OUT/r8_bench_gate_stash_rest.log 2>&1; echo rc=$?; grep -E "^(B|var|corr)" $OUT/r8_bench_gate_stash_rest.log
(time PYTHONPATH=$PWD timeout 80 python3 -m kimiops.cli demo --no-progress) > $OUT/r8_demo.log 2>&1; tail -6 $OUT/r8_demo.log
