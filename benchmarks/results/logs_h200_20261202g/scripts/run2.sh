#!/bin/bash
# run 2: Gluon state variants A (main tree: chain first, u of the next chunk issued in the step),
# B (.exp/B: + the previous chunk's o stored behind S^T w^T), C (.exp/C: + the freed slot refilled
# behind S^T w^T), D (.exp/D: + g's column decays loaded at the step's start); their GPU tests, the state alone against Triton, then B1 T8192 parts with C.
out=$1
export PYTHONUNBUFFERED=1
t0=$(date +%s)
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w"; done
root=$PWD
for t in A B C D; do
  d=$root; [ $t != A ] && d=$root/.exp/$t
  cd $d
  if [ $t = A ] || [ $t = D ]; then
    PYTHONPATH=$d timeout 150 python3 -m pytest -q tests/kda/test_chunk_state_gluon.py -p no:cacheprovider > $out/r2_${t}_pytest.log 2>&1
    echo "rc $? after $(( $(date +%s) - t0 )) s" >> $out/r2_${t}_pytest.log; tail -3 $out/r2_${t}_pytest.log
  fi
  PYTHONPATH=$d:$d/benchmarks timeout 150 python3 benchmarks/tools/state_gluon_ab.py --cases B1_T8192,B8_T1024,B1_T32768 --stages 2,3 > $out/r2_${t}_ab.log 2>&1
  echo "rc $? after $(( $(date +%s) - t0 )) s" >> $out/r2_${t}_ab.log; echo "== $t"; cat $out/r2_${t}_ab.log
done
# the pipeline ablation on the faster of C and D at B1 T8192 with 3 stages
best=C; bc=$(grep -A2 "^B1 T8192" $out/r2_C_ab.log | grep "3 stages" | awk '{print $4}'); bd=$(grep -A2 "^B1 T8192" $out/r2_D_ab.log | grep "3 stages" | awk '{print $4}')
python3 -c "import sys; sys.exit(0 if float('${bd:-1e9}') < float('${bc:-1e9}') else 1)" && best=D
echo "pipeline ablation on $best ($bc / $bd us)"; cd $root/.exp/$best
PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site timeout 200 python3 benchmarks/bench_kda_prefill.py --ablate pipeline --cases B1_T8192 --modes g,gate > $out/r2_pipeline_b1.log 2>&1
echo "rc $? after $(( $(date +%s) - t0 )) s" >> $out/r2_pipeline_b1.log; cat $out/r2_pipeline_b1.log | grep -v "^\s*$" | tail -32
