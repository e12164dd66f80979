set -u
export PYTHONUNBUFFERED=1
PYTHONPATH=$PWD timeout 90 python3 .exp/r15/profile_full_path.py > $OUT/r10_profile_full_path.log 2>&1; head -60 $OUT/r10_profile_full_path.log | cut -c1-200
timeout 40 python3 benchmarks/tools/prefill_host_gpu.py $PWD > $OUT/r10_prefill_host.log 2>&1; cat $OUT/r10_prefill_host.log
