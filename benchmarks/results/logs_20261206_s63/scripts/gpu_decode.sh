#!/bin/bash
# Sixty-third session, run 3 (carry .whl): the issue-4 decode table (ours vs FLA 0.6 in one process;
# eager wall at N = 1 beside a lone torch.add_) three times, then the host pieces again.
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w" 2>/dev/null; done
export PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv > $OUT/card.log
for i in 1 2 3; do
  mkdir -p $OUT/json$i
  timeout 170 python3 benchmarks/bench_kda_decode.py --out $OUT/json$i --ns 1 2 8 64 128 --no-sweep > $OUT/bench_decode_$i.log 2>&1
done
python3 benchmarks/tools/decode_host_gpu.py > $OUT/decode_host.log 2>&1
tail -n 22 $OUT/bench_decode_*.log; head -3 $OUT/decode_host.log
