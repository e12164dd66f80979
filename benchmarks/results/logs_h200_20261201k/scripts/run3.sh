#!/bin/bash
# run 3: the code written after run 2, on the GPU: elastic replays with state snapshots, of one
# fixed-length sequence, and the launches kept for the previous call's counts; then the extend
# host times with several calls per batch (a model's layers), replay on / off
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w"; done
export PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site PYTHONUNBUFFERED=1
timeout 260 python3 -m pytest -q -m gpu tests/kda/test_chunk_kernel.py -k "parts_or_segments or repeated_eager or new_token_counts" > $OUT/r3_pytest_eager_prefill.log 2>&1; echo "rc $?" >> $OUT/r3_pytest_eager_prefill.log
timeout 120 python3 -m pytest -q -m gpu tests/kda/test_track.py tests/kda/test_backend.py tests/integrations/test_sglang.py > $OUT/r3_pytest_track_backend_sglang.log 2>&1; echo "rc $?" >> $OUT/r3_pytest_track_backend_sglang.log
timeout 150 python3 benchmarks/tools/extend_host_gpu.py --cases 1x64-512 parts segments4 --layers 8 --ab 2 --ab-only --calls 20 > $OUT/r3_extend_host_layers.log 2>&1; echo "rc $?" >> $OUT/r3_extend_host_layers.log
