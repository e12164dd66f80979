set -u
export PYTHONUNBUFFERED=1
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w" 2>/dev/null; done
CF="pair_steps=0;pair_steps=0,num_stages=2;pair_steps=1;pair_steps=1,num_stages=1;pair_steps=1,BV=32,num_warps=2;pair_steps=1,num_warps=8;pair_steps=1,BV=16,num_warps=2,pow2_scale=0"
PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site timeout 420 python3 benchmarks/tools/pair_steps_stages.py --configs "$CF" > $OUT/r2_pair_stages.log 2>&1; echo rc=$?
cat $OUT/r2_pair_stages.log | grep -v Warning
