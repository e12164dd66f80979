# run 5: PDL order for several tokens per request (vLLM's speculative decode, SGLang's target verify)
set -u
export PYTHONPATH=$PWD:$PWD/benchmarks PYTHONUNBUFFERED=1
S=benchmarks/results/logs_h200_20261201g/scripts
python3 $S/spec_order.py 2>&1 | tee -a $OUT/r5_spec_order.log
