#!/bin/bash
# Forty-eighth session, one command for the little device time left after refused starts:
# 1. the randomized test cases on CUDA (the arch fix of ee4b9d2 under torch.compile included:
#    the log must show no "lru_cache" warning);
# 2. the forty-fifth session's A/B of stage 1's diagonal-block inverse on sub-blocks of 8 (main),
#    4 (.exp/b4) and 2 (.exp/b2), three alternating rounds (logs_h200_20261205b/scripts/run2.sh);
# 3. aligned-keys accuracy of each tree beside FLA 0.6, while the time guard allows.
# Run from the repository root with $OUT set; carry .whl and .exp. RUN_S (default 570) bounds the
# whole run, ROUNDS (default 3) the A/B rounds, for when less device time is left.
export PYTHONUNBUFFERED=1
T0=$(date +%s)
RUN_S=${RUN_S:-570} ROUNDS=${ROUNDS:-3}
left() { echo $(( RUN_S - ($(date +%s) - T0) )); }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $OUT/r1_gpu.log
PYTHONPATH=$PWD timeout 200 python3 -m pytest -q -p no:cacheprovider tests/kda/test_ops.py \
  tests/kda/test_backend.py tests/gemm/test_linear.py \
  -k "drawn_together or engine_steps or one_argument_made_wrong or random_calls_match or traced_by_torch_compile" > $OUT/r1_fuzz_pytest.log 2>&1
echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/r1_fuzz_pytest.log; tail -n 3 $OUT/r1_fuzz_pytest.log
echo "lru_cache warnings: $(grep -c lru_cache $OUT/r1_fuzz_pytest.log)"
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/fla_core-0.6.0-py3-none-any.whl
bash benchmarks/tools/prefill_ab_rounds.sh $OUT r1 $ROUNDS main b4 b2 > $OUT/r1_summary.log 2>&1
echo "A/B done after $(( $(date +%s) - T0 )) s"
(cd $OUT && tar czf r1_round_ab_logs.tgz r1_round_ab_*.log && rm r1_round_ab_*.log)
tail -16 $OUT/r1_summary.log
for t in b4 b2 main; do
  [ $(left) -lt 40 ] && break
  s0=$(date +%s)
  PYTHONPATH=$PWD/.exp/$t:/tmp/site timeout $(left) python3 benchmarks/tools/prefill_aligned_keys_accuracy.py \
    > $OUT/r1_aligned_keys_$t.log 2>&1; echo "rc $? after $(( $(date +%s) - s0 )) s" >> $OUT/r1_aligned_keys_$t.log
done
grep -h "ours\|^rc" $OUT/r1_aligned_keys_*.log | sed 's/  fla.*//'
echo "total $(( $(date +%s) - T0 )) s"
