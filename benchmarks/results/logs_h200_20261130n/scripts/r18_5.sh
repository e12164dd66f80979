set -u
export PYTHONUNBUFFERED=1
PYTHONPATH=$PWD timeout 400 python3 benchmarks/bench_kda_prefill.py --ablate pipeline --modes g,gate --cases B1_T8192,B1_T32768 --rows "4 parts,4 parts state-stream-order,8 parts,8 parts state-stream-order,default,default state-stream-order" --rep 20 > $OUT/r5_pipeline_state_order.log 2>&1; echo rc=$?; grep "pipeline\|gate" $OUT/r5_pipeline_state_order.log | tail -30
