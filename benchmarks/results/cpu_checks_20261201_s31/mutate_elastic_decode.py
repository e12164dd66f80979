"""Mutations of the thirty-first session's code (elastic decode entries, the guards' free dims, the
backend's views); each must make a CPU test fail. Run from the repository root; restores every file."""
import subprocess
import sys
from pathlib import Path

TESTS = ["tests/kda/test_decode_replay.py", "tests/kda/test_prefill_replay.py", "tests/kda/test_backend.py",
         "tests/kda/test_ops.py"]
MUTATIONS = [
    ("kimiops/kda/kernels/recurrent.py", "tail[_TAIL_N], tail[_TAIL_T] = N, T", "tail[_TAIL_N] = N"),
    ("kimiops/kda/kernels/recurrent.py", "tail[_TAIL_N], tail[_TAIL_T] = N, T", "tail[_TAIL_T] = T"),
    ("kimiops/kda/kernels/recurrent.py", "per_sequence * N, tuple(tail)", "bound.grid, tuple(tail)"),
    ("kimiops/kda/kernels/recurrent.py", "config_for(N * self.HV, self.varlen)", "config_for(N, self.varlen)"),
    ("kimiops/kda/kernels/recurrent.py", "config_for(N * self.HV, self.varlen)", "config_for(N * self.HV, True)"),
    ("kimiops/kda/kernels/recurrent.py", "self.variants.setdefault(cfg, bound)", "pass"),
    ("kimiops/kda/kernels/recurrent.py", "_TAIL_T = _TAIL_N + 1", "_TAIL_T = _TAIL_N + 2"),
    ("kimiops/kda/runner.py", "    d = 0 if cu_seqlens is None else 1\n", "    d = 1\n"),
    ("kimiops/kda/runner.py", "if num_accepted is not None and num_accepted.shape[0] != N:",
     "if False:"),
    ("kimiops/kda/runner.py", "_ELASTIC_BATCH = (((0,),) * 5 + ((0,), (0,), (), (), (), (0,)), ((),) * 11)",
     "_ELASTIC_BATCH = (((0,),) * 5 + ((0,), (0,), (), (), (), (0,)), ((0,),) * 5 + ((),) * 6)"),
    ("kimiops/kda/runner.py", "_ELASTIC_VARLEN = (((1,),) * 5 + ((0,), (0,), (0,), (), (), (0,)), ((0,),) * 5 + ((),) * 6)",
     "_ELASTIC_VARLEN = (((0, 1),) * 5 + ((0,), (0,), (0,), (), (), (0,)), ((0,),) * 5 + ((),) * 6)"),
    ("kimiops/kda/runner.py", "_ELASTIC_VARLEN = (((1,),) * 5 + ((0,), (0,), (0,), (), (), (0,)), ((0,),) * 5 + ((),) * 6)",
     "_ELASTIC_VARLEN = (((1,),) * 5 + ((0,), (0,), (0,), (), (), (0,)), ((0, 1),) * 5 + ((),) * 6)"),
    ("kimiops/kda/runner.py", "    if call.guard is not None:\n        _remember(_eager, exact_key, call)\n",
     "    pass\n"),
    ("kimiops/kda/runner.py", "    if N < 1 or q.shape[1] < 1:", "    if N < 0:"),
    ("kimiops/kda/runner.py", "    if exact and not (elastic and elastic_launch.repeats_recorded_shapes):",
     "    if exact and not elastic:"),
    ("kimiops/kda/runner.py", "            N = q.shape[0] if cu_seqlens is None else cu_seqlens.shape[0] - 1\n            ht = ",
     "            N = cu_seqlens.shape[0] - 1 if cu_seqlens is not None else 1\n            ht = "),
    ("kimiops/kda/backend.py", "g, beta = g.view(N, 1, *g.shape[2:]), beta.view(N, 1, *beta.shape[2:])",
     "g, beta = g.view(N, 1, self.num_v_heads, self.head_k_dim), beta.view(N, 1, self.num_v_heads)"),
    ("kimiops/kda/backend.py", "            if q.shape[1] == N:  #", "            if True:  #"),
    ("kimiops/kda/backend.py", "        if g.shape[1] > T:  # CUDA-graph padding rows\n            g = g[:, :T]\n", ""),
]

failures = 0
for i, (path, old, new) in enumerate(MUTATIONS):
    src = Path(path).read_text()
    if src.count(old) != 1:
        print(f"mutation {i}: pattern not found once in {path}: {old[:60]!r}")
        failures += 1
        continue
    Path(path).write_text(src.replace(old, new))
    try:
        r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *TESTS],
                           capture_output=True, text=True)
    finally:
        Path(path).write_text(src)
    last = (r.stdout.strip().splitlines() or ["?"])[-1]
    killed = r.returncode != 0
    failures += not killed
    print(f"mutation {i}: {'killed' if killed else 'SURVIVED'} ({last}) {path}: {old[:50]!r} -> {new[:50]!r}")
print(f"{len(MUTATIONS)} mutations, {failures} survived or not applied")
