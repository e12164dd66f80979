#!/bin/bash
# Mutations of the threaded warm-up; each must make a test fail.
cd "$(git rev-parse --show-toplevel)"
run() { CUDA_VISIBLE_DEVICES= timeout 600 python3 -m pytest -q -p no:cacheprovider tests/test_launch.py "tests/kda/test_warmup.py::test_warmup_on_threads_compiles_first_then_launches_what_one_thread_launches" 2>&1 | tail -1; }
mutate() {  # name, python replacement (file, old, new)
  echo "== $1"
  python3 - "$2" "$3" "$4" <<'PY'
import sys
p, a, b = sys.argv[1:]
s = open(p).read(); assert a in s, a; open(p, "w").write(s.replace(a, b, 1))
PY
  run
  git checkout -q -- "$2"
}
echo "== unmutated"; run
mutate "fast path not stepping aside" kimiops/launch.py "    if _BACKGROUND_THREADS and _THREAD.background is not None:
        return False" "    pass"
mutate "threads in the background not counted" kimiops/launch.py "            _BACKGROUND_THREADS += 1" "            pass"
mutate "jit_launch launches in the background" kimiops/launch.py "            kernel.warmup(*args, grid=grid, **kwargs)
        return None" "            kernel.warmup(*args, grid=grid, **kwargs)"
mutate "no background pass" kimiops/kda/warmup.py "    if compile_workers > 1 and calls:" "    if False:"
mutate "background pass without the real one" kimiops/kda/warmup.py "    for phase, size, call in calls:
        call()
        ran[phase].append(size)" "    for phase, size, call in calls:
        ran[phase].append(size)"
