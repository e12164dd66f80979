# run 3: batch-mode table with early first-token loads: GPU tests, config A/B in batch mode (same and cold slots), the decode and SGLang benches
set -u
for w in .whl/*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w"; done
export PYTHONPATH=$PWD:$PWD/benchmarks:/tmp/site PYTHONUNBUFFERED=1
timeout 300 python3 -m pytest -q -m gpu tests/kda/test_recurrent_kernel.py tests/kda/test_backend.py tests/integrations/test_sglang.py 2>&1 | tail -5 > $OUT/r3_pytest_gpu.log
C="8x1 8x1e 8x2 8x2e 8x4 8x4e 16x2e 16x1e 32x4e"
python3 benchmarks/tools/decode_config_ab.py --batch --cold --ns 1 2 4 8 --configs $C 2>&1 | tee $OUT/r3_batch_ab_cold.log
python3 benchmarks/tools/decode_config_ab.py --batch --ns 1 2 4 8 --configs $C 2>&1 | tee $OUT/r3_batch_ab_same.log
python3 benchmarks/tools/decode_config_ab.py --batch --cold --ns 16 32 64 --configs 8x1 8x1e 8x1h 8x1he 16x1e 2>&1 | tee -a $OUT/r3_batch_ab_cold.log
python3 benchmarks/tools/decode_config_ab.py --batch --ns 16 32 64 128 --configs 8x1 8x1e 8x1h 8x1he 16x1e 2>&1 | tee -a $OUT/r3_batch_ab_same.log
python3 benchmarks/bench_kda_decode.py --out $OUT --ns 1 2 4 8 16 64 128 --no-sweep 2>&1 | tee $OUT/r3_bench_decode.log
python3 benchmarks/bench_sglang_decode.py --out $OUT 2>&1 | tee $OUT/r3_bench_sglang.log
cat $OUT/r3_pytest_gpu.log
