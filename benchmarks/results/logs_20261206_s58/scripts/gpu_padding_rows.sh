#!/bin/bash
# Fifty-eighth session, run 4: KDABackend.extend's CUDA-graph padding rows now get zero output rows (run 3's
# initcheck found them never written). initcheck (no kernel filter, caching allocator off) on the same serving
# walk as run 3, then the GPU tests of the change and of the paths it touches (replays, warm-up, the vLLM adapter).
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD
T0=$(date +%s)
nvidia-smi --query-gpu=name --format=csv,noheader > $OUT/gpu.log; cat $OUT/gpu.log
PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 110 compute-sanitizer --tool initcheck --print-limit 12 --error-exitcode 3 \
  python3 benchmarks/tools/fuzz_serving_steps.py --device cuda --engines 1 --steps 8 --seed 60 -v > $OUT/serving.log 2>&1
echo "== serving: rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/serving.log
timeout 60 python3 -m pytest -q -p no:cacheprovider tests/kda/test_chunk_kernel.py -k "zero_padding_rows or varlen" \
  > $OUT/pytest.log 2>&1
echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/pytest.log
timeout $(( 290 - ($(date +%s) - T0) )) python3 -m pytest -q -p no:cacheprovider tests/kda/test_backend.py \
  tests/kda/test_prefill_replay.py tests/kda/test_warmup.py tests/integrations/test_vllm.py >> $OUT/pytest.log 2>&1
echo "rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/pytest.log
grep -h "ERROR SUMMARY\|failed checks\|== \|passed\|failed\|rc " $OUT/serving.log $OUT/pytest.log | tail -n 12
