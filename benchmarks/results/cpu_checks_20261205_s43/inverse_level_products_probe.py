"""16x16 diagonal blocks (tests/kda/test_diag_block_inverse.py's kinds, 4 seeds): sub-blocks of 8 by substitution, then the
level (I - D Q) D with each product either on operands rounded to nearest tf32 (r) or exact (x, the
tf32x3 model): columns rr / xr / rx / xx = first product / second product; relative error against fp64.
Run from a tree with that test file (exp/blocked-inverse): PYTHONPATH=$PWD TRITON_INTERPRET=1 python3 <this>"""
import sys, torch
sys.path.insert(0, "tests/kda")
import test_diag_block_inverse as t
from kimiops.testing import tf32_rounded, rel_err
def subst(L):
    D = torch.eye(L.shape[-1]).expand_as(L).clone()
    for j in range(L.shape[-1]):
        D = D - L[..., :, j:j + 1] * D[..., j:j + 1, :]
    return D
def rn(x): return tf32_rounded(x)
ex = lambda a, b: (a.double() @ b.double()).float()
rr = lambda a, b: (rn(a).double() @ rn(b).double()).float()
idx = torch.arange(16)
same = (idx[:, None] // 8) == (idx[None, :] // 8)
qm = (idx[:, None] >= 8) & (idx[None, :] < 8)
for kind in ("random", "aligned", "aligned2"):
    for seed in range(4):
        a = t._blocks(kind, seed)
        exact = torch.linalg.inv(torch.eye(16, dtype=torch.float64) + a)
        af = a.float()
        D = subst(af * same)
        out = []
        for p1, p2 in ((rr, rr), (ex, rr), (rr, ex), (ex, ex)):
            d = p2(torch.eye(16) - p1(D, af * qm), D)
            out.append(f"{rel_err(d, exact):.1e}")
        print(kind, seed, "rr/xr/rx/xx", *out)
