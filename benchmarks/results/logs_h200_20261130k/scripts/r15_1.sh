set -u
for w in .whl/fla_core*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/fla "$w"; done
for w in .whl/transformers*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w"; done
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $OUT/nvidia_smi.txt
PYTHONPATH=$PWD:/tmp/site timeout 330 python3 -m pytest -q -m gpu tests -p no:cacheprovider > $OUT/r1_pytest_gpu_all.log 2>&1; tail -3 $OUT/r1_pytest_gpu_all.log
PYTHONPATH=$PWD:/tmp/fla timeout 120 python3 benchmarks/bench_kda_decode.py --no-sweep --out $OUT > $OUT/r1_bench_decode.log 2>&1; tail -22 $OUT/r1_bench_decode.log
PYTHONPATH=$PWD timeout 100 python3 benchmarks/tools/decode_config_ab.py --ns 1 2 8 --rounds 5 --configs 4x1 8x1 16x1 4x2 8x2 > $OUT/r1_decode_config_ab.log 2>&1; cat $OUT/r1_decode_config_ab.log
