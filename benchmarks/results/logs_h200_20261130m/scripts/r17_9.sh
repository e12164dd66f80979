set -u
for w in .whl/transformers*.whl; do python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$w"; done
export PYTHONUNBUFFERED=1
PYTHONPATH=$PWD:/tmp/site timeout 200 python3 -m pytest -q -m gpu tests --ignore=tests/gemm --ignore=tests/kda/test_chunk_kernel.py --ignore=tests/kda/test_ops.py -p no:cacheprovider > $OUT/r9_pytest_gpu_rest.log 2>&1; echo rc=$?; tail -3 $OUT/r9_pytest_gpu_rest.log
