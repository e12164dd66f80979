#!/bin/bash
# Fifty-fifth session, first GPU round (~8 min): the review's mends of the fifty-fourth session
# (warm-up, adapters) on the GPU, the Gluon linear's GPU tests on branch exp/linear-cluster, and the
# cluster (distributed shared memory) split-K hand-off against the global one (linear_cluster_ab.py).
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD
T0=$(date +%s)
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv > $OUT/gpu.log
git log -1 --format=%h > $OUT/commit.log 2>/dev/null
timeout 200 python3 -m pytest -q -rs tests/kda/test_warmup.py tests/integrations > $OUT/pytest_warmup_integrations.log 2>&1
echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/pytest_warmup_integrations.log
timeout 150 python3 -m pytest -q -rs tests/gemm -k gluon > $OUT/pytest_gemm_gluon.log 2>&1
echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/pytest_gemm_gluon.log
left=$(( 570 - ($(date +%s) - T0) ))
timeout $left python3 benchmarks/tools/linear_cluster_ab.py --shapes 1024x2048,2048x4096,2624x2048,1024x6144,6144x2048 \
  --ms 1,8,32 > $OUT/linear_cluster_ab.log 2>&1
echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/linear_cluster_ab.log
tail -3 $OUT/*.log
