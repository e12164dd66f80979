# Each repro of the twenty-ninth session's audits and fuzzing, run on the session's starting code
# (4370cec, `git archive 4370cec kimiops | tar -x -C OLD`) and on the final code, CPU only
# (Triton interpreter / torch path). Usage: bash run_all.sh OLD_TREE NEW_TREE > repros.log
set -u
# inductor caches compiled graphs under keys that do not see a custom op's fake implementation: off,
# so each tree compiles with its own
export TORCHINDUCTOR_FX_GRAPH_CACHE=0 TORCHINDUCTOR_AUTOGRAD_CACHE=0
cd "$(dirname "$0")"
for f in repro_*.py; do
  for tree in "$1" "$2"; do
    echo "=== $f on $tree"
    PYTHONPATH="$tree:$PWD" timeout 600 python3 "$f" 2>&1 | grep -v -e "RuntimeWarning" -e "return TensorHandle" | tail -25
  done
done
