# The launcher-form inverse (tf32 level products) of tests/kda/test_diag_block_inverse.py for
# sub-blocks of 8, 4 and 2 rows, against fp64, in the interpreter. Run from the repository root:
# TRITON_INTERPRET=1 PYTHONPATH=$PWD python3 benchmarks/results/cpu_checks_20261205_s48/inverse_sub_block_errors.py
import sys; sys.path.insert(0, "tests/kda")
import torch
import test_diag_block_inverse as t
from kimiops.testing import rel_err
for kind in ["random", "aligned", "aligned2"]:
    a = t._blocks(kind, seed=1)
    exact = torch.linalg.inv(torch.eye(t.BC, dtype=torch.float64) + a)
    errs = {base: rel_err(t._inverse(a.float(), base, "tf32"), exact) for base in (8, 4, 2)}
    print(kind, " ".join(f"base {b}: {e:.2e}" for b, e in errs.items()), "bound", t.TF32_BOUND[kind])
