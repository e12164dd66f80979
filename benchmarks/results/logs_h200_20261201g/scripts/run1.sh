# run 1: N = 1 decode time against the placement of the pool slot, index, inputs and output (one process, twice)
set -u
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w"; done
export PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site PYTHONUNBUFFERED=1
S=benchmarks/results/logs_h200_20261201g/scripts
for r in 1 2; do python3 $S/placement.py .exp/vllm_kda 2>&1 | tee -a $OUT/r1_placement.log; done
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv | tee -a $OUT/r1_placement.log
