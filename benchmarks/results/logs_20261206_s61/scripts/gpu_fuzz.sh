#!/bin/bash
# Sixty-first session, run 5: the randomized checks on the GPU's compiled kernels with new seeds, four
# processes side by side (nproc / 4 torch threads each), each stopped after FUZZ_S seconds (default 210):
# every call that finished is printed (-v), a failing check prints its own line.
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD OMP_NUM_THREADS=$(( $(nproc) / 4 ))
nvidia-smi --query-gpu=name --format=csv > $OUT/card.log; git log --oneline -1 > $OUT/rev.log
S=${FUZZ_S:-210}; T=benchmarks/tools
f() { local name=$1; shift; timeout $S python3 "$@" -v > $OUT/$name.log 2>&1; echo "rc $?" >> $OUT/$name.log; }
f fuzz_public_ops_cuda_seed61 $T/fuzz_public_ops.py --device cuda --calls 300 --seed 61 --big-dims 0.25 &
f fuzz_public_ops_cuda_seed62 $T/fuzz_public_ops.py --device cuda --calls 300 --seed 62 &
f fuzz_serving_steps_cuda_seed61 $T/fuzz_serving_steps.py --device cuda --engines 8 --steps 25 --seed 61 --verify 0.3 &
f fuzz_linear_cuda_seed61 $T/fuzz_linear.py --device cuda --calls 400 --seed 61 &
wait
for l in $OUT/fuzz_*.log; do echo "== $l: $(grep -ci 'fail' $l) lines with 'fail'"; tail -n 3 $l; done
