"""One-off CPU experiment (thirty-fourth session): which of the prefill pipeline's rounded tf32
operands buys the accuracy? The H200's MMA truncates fp32 operands of a tf32 dot (see
``kimiops/kda/kernels/dot_operands.py``); Triton's interpreter computes those dots in fp32. In a
temporary copy of the package each ``tf32_operand`` site group is replaced by a model of the
operand, truncated (the GPU without rounding) or rounded to nearest (``tf32_rna``):
``inv`` (stage 1's two inverse products, both operands), ``w`` (Tinv and x of ``w = Tinv x``),
``tb`` (``Tinv diag(beta)``, the state stage's u operand, rounded when stage 1 stores it).
Each variant rounds the named groups and truncates the others; fp16 inputs, T = 1024,
H = HV = 2, K = V = 64, three gates, errors against the fp64 recurrence, one interpreter process each.

    python3 benchmarks/results/cpu_checks_20261202_s34/tf32_sites_model.py   (from the repo root)
"""
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
PATCH = '''

import os as _os
_RNA = set(_os.environ.get("TF32_RNA_SITES", "").split(","))


@triton.jit
def _tf32_trunc(x):
    return (x.to(tl.int32, bitcast=True) & -0x2000).to(tl.float32, bitcast=True)


site_inv = tf32_rna if "inv" in _RNA else _tf32_trunc
site_w = tf32_rna if "w" in _RNA else _tf32_trunc
site_tb = tf32_rna if "tb" in _RNA else _tf32_trunc
'''
EDITS = [
    ("from kimiops.kda.kernels.dot_operands import f16_hi_lo, tf32_operand, tf32_rna",
     "from kimiops.kda.kernels.dot_operands import f16_hi_lo, tf32_rna, site_inv, site_w, site_tb"),
    ("tl.dot(tf32_operand(dblk, INV_PREC), tf32_operand(a_off_kk, INV_PREC)", "tl.dot(site_inv(dblk), site_inv(a_off_kk)"),
    ("tl.dot(tf32_operand(eye - n_mat, INV_PREC), tf32_operand(dblk, INV_PREC)", "tl.dot(site_inv(eye - n_mat), site_inv(dblk)"),
    ("tf32_operand(t_inv * b_beta[None, :], INV_PREC)", "site_tb(t_inv * b_beta[None, :])"),
    ("t_inv_op = tf32_operand(t_inv, INV_PREC)", "t_inv_op = site_w(t_inv)"),
    ("tl.dot(t_inv_op, tf32_operand(x, INV_PREC)", "tl.dot(t_inv_op, site_w(x)"),
]
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
    print(f"rounded={{os.environ['TF32_RNA_SITES'] or '-'}} gate={{gate}} mild={{mild}}: rel o {{rel_err(o, ro):.4e}}, "
          f"state {{rel_err(ht, rs):.4e}}", flush=True)
'''


def main():
    tmp = tempfile.mkdtemp()
    shutil.copytree(os.path.join(ROOT, "kimiops"), os.path.join(tmp, "kimiops"))
    with open(os.path.join(tmp, "kimiops/kda/kernels/dot_operands.py"), "a") as fh:
        fh.write(PATCH)
    path = os.path.join(tmp, "kimiops/kda/kernels/chunk_intra.py")
    src = open(path).read()
    for old, new in EDITS:
        assert src.count(old) == 1, old
        src = src.replace(old, new)
    assert "tf32_operand(" not in src.split("def chunk_intra_kernel")[1]
    open(path, "w").write(src)
    child = CHILD.format(tests=os.path.join(ROOT, "tests"), tests_kda=os.path.join(ROOT, "tests", "kda"),
                         pkg=os.path.join(tmp, "kimiops"))
    for sites in ("", "inv", "w", "tb", "inv,w,tb"):
        env = dict(os.environ, TF32_RNA_SITES=sites, PYTHONPATH=tmp)
        subprocess.run([sys.executable, "-c", child], env=env, check=True, cwd=tmp)
    shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
