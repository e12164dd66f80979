"""One-off CPU experiment (thirty-third session): how much do the prefill pipeline's unrounded tf32
products cost in accuracy? The H200's MMA truncates fp32 operands of a tf32 dot to tf32 (Triton 3.6
emits no rounding; see ``kimiops/kda/kernels/dot_operands.py``), while Triton's interpreter computes
those dots in full fp32. This script copies the package to a temporary folder and, there only, wraps
both operands of stage 1's inverse products (``n_mat``, ``t_inv``) and w (``Tinv x``) and the
state stage's ``u^T = v^T tb^T`` (tb only: v is exact in tf32) in a model of the operand: ``none``
(as the interpreter computes), ``trunc`` (the GPU's truncation: low 13 bits cleared) or ``rna``
(``tf32_rna``, rounded to nearest), then runs each in a fresh interpreter process: fp16 inputs,
T = 1024, H = HV = 2, K = V = 64, three gates, errors against the fp64 recurrence.

    python3 benchmarks/results/cpu_checks_20261201_s33/tf32_truncation_model.py   (from the repo root)
"""
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
PATCH = '''

import os as _os
_MODE = _os.environ.get("TF32_MODEL", "none")


@triton.jit
def _tf32_trunc(x):
    return (x.to(tl.int32, bitcast=True) & -0x2000).to(tl.float32, bitcast=True)


if _MODE == "trunc":
    tf32_model = _tf32_trunc
elif _MODE == "rna":
    tf32_model = tf32_rna
else:
    @triton.jit
    def tf32_model(x):
        return x
'''
EDITS = {
    "kimiops/kda/kernels/chunk_intra.py": [
        ("from kimiops.kda.kernels.dot_operands import f16_hi_lo, tf32_rna",
         "from kimiops.kda.kernels.dot_operands import f16_hi_lo, tf32_rna, tf32_model"),
        ("n_mat = tl.dot(dblk, a_off_kk, input_precision=INV_PREC)",
         "n_mat = tl.dot(tf32_model(dblk), tf32_model(a_off_kk), input_precision=INV_PREC)"),
        ("t_inv = tl.dot(eye - n_mat, dblk, input_precision=INV_PREC)",
         "t_inv = tl.dot(tf32_model(eye - n_mat), tf32_model(dblk), input_precision=INV_PREC)"),
        ("b_w = tl.dot(t_inv, x, input_precision=INV_PREC)",
         "b_w = tl.dot(tf32_model(t_inv), tf32_model(x), input_precision=INV_PREC)")],
    "kimiops/kda/kernels/chunk_state.py": [
        ("from kimiops.kda.kernels.dot_operands import f16_hi_lo",
         "from kimiops.kda.kernels.dot_operands import f16_hi_lo, tf32_model"),
        ("b_ut = tl.dot(b_vt.to(tl.float32), b_tbt, input_precision=INV_PREC)",
         "b_ut = tl.dot(b_vt.to(tl.float32), tf32_model(b_tbt), input_precision=INV_PREC)")],
}
CHILD = '''
import os, sys
os.environ["TRITON_INTERPRET"] = "1"
sys.path[:0] = [{tests!r}, {tests_kda!r}]
import torch
import kimiops
assert kimiops.__file__.startswith({pkg!r}), kimiops.__file__
from test_chunk_kernel import make_inputs, run, reference, rel_err
for gate, mild in (("none", True), ("softplus", False), ("lower_bound", True)):
    inp = make_inputs(1, 1024, 2, 2, 64, 64, gate, torch.float16, torch.device("cpu"), seed=4, mild=mild)
    ht = torch.empty(1, 2, 64, 64)
    o = run(inp, gate=gate, scale=64 ** -0.5, ht=ht)
    ro, rs = reference(inp, gate=gate, scale=64 ** -0.5)
    print(f"TF32_MODEL={{os.environ['TF32_MODEL']}} gate={{gate}} mild={{mild}}: rel o {{rel_err(o, ro):.4e}}, "
          f"state {{rel_err(ht, rs):.4e}}", flush=True)
'''


def main():
    tmp = tempfile.mkdtemp()
    shutil.copytree(os.path.join(ROOT, "kimiops"), os.path.join(tmp, "kimiops"))
    with open(os.path.join(tmp, "kimiops/kda/kernels/dot_operands.py"), "a") as fh:
        fh.write(PATCH)
    for path, edits in EDITS.items():
        full = os.path.join(tmp, path)
        text = open(full).read()
        for old, new in edits:
            if old not in text:
                raise SystemExit(f"{path}: {old!r} not found (the kernel changed; update this script)")
            text = text.replace(old, new)
        open(full, "w").write(text)
    child = CHILD.format(tests=os.path.join(ROOT, "tests"), tests_kda=os.path.join(ROOT, "tests/kda"), pkg=tmp)
    for mode in ("none", "trunc", "rna"):
        env = dict(os.environ, TF32_MODEL=mode, PYTHONPATH=tmp)
        out = subprocess.run([sys.executable, "-c", child], env=env, capture_output=True, text=True, cwd=tmp)
        print("".join(x + "\n" for x in out.stdout.splitlines() if x.startswith("TF32_MODEL")), end="", flush=True)
        if out.returncode:
            print(out.stderr[-2000:])
    shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
