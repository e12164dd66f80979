"""Patch a copy of kimiops (argv[1]: its kimiops/gemm directory) so that the linear kernels release the
next grid after their PDL wait instead of before their L2 prefetch (Triton) or weight-ring loads (Gluon)."""
import sys

d = sys.argv[1]
p = f"{d}/skinny.py"
s = open(p).read()
old = """        tl.extra.cuda.gdc_launch_dependents()
        pf_rows = tl.minimum(offs_n, N - 1).to(tl.int64)[:, None] * stride_wn"""
assert s.count(old) == 1
s = s.replace(old, """        pf_rows = tl.minimum(offs_n, N - 1).to(tl.int64)[:, None] * stride_wn""")
old = """                prefetch_l2(w_ptr + pf_rows + pf_cols)
        tl.extra.cuda.gdc_wait()"""
assert s.count(old) == 1
s = s.replace(old, """                prefetch_l2(w_ptr + pf_rows + pf_cols)
        tl.extra.cuda.gdc_wait()
        tl.extra.cuda.gdc_launch_dependents()""")
open(p, "w").write(s)
p = f"{d}/skinny_gluon.py"
s = open(p).read()
old = """        if PDL:
            gdc_launch_dependents()
        # The weight ring fills before the wait"""
assert s.count(old) == 1
s = s.replace(old, """        # The weight ring fills before the wait""")
old = """        if PDL:
            gdc_wait()
        for j in gl.static_range(STAGES):
            _load_tile(x_desc"""
assert s.count(old) == 1
s = s.replace(old, """        if PDL:
            gdc_wait()
            gdc_launch_dependents()
        for j in gl.static_range(STAGES):
            _load_tile(x_desc""")
open(p, "w").write(s)
