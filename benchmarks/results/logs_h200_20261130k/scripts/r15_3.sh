set -u
export PYTHONUNBUFFERED=1
SC=$PWD/.exp/r15/sc
PYTHONPATH=$PWD timeout 120 python3 .exp/r15/align_check.py > $OUT/r3_align_check.log 2>&1; cat $OUT/r3_align_check.log
(cd $SC && PYTHONPATH=$SC timeout 220 python3 -m pytest -q -m gpu tests/kda/test_chunk_kernel.py -k "repeated_eager or fast_launch" -p no:cacheprovider > $OUT/r3_pytest_gpu_shortcut.log 2>&1); tail -3 $OUT/r3_pytest_gpu_shortcut.log
