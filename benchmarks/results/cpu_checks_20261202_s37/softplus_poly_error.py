"""Relative error of the softplus gate's atanh polynomial (``kimiops.kda.gate._ATANH_C*``, coefficients
rounded to fp32) against atanh(s) / s in fp64 over s in (0, 1/3], the range ``softplus_tl`` uses, and
of the same fit refitted here (least squares at 200 Chebyshev nodes, degree 4), to show where the
constants come from.
    python3 benchmarks/results/cpu_checks_20261202_s37/softplus_poly_error.py"""
import numpy as np

from kimiops.kda import gate

T_MAX = 1.0 / 9.0
coef = np.array([float(getattr(gate, f"_ATANH_C{i}").value) for i in range(5)])
t = np.linspace(0.0, T_MAX, 200001)[1:]
exact = np.arctanh(np.sqrt(t)) / np.sqrt(t)
err = np.abs(np.polynomial.polynomial.polyval(t, coef.astype(np.float32).astype(np.float64)) / exact - 1)
print(f"kimiops constants (fp32): max rel err {err.max():.2e}")
nodes = (1 - np.cos(np.pi * (np.arange(200) + 0.5) / 200)) / 2 * T_MAX
refit = np.polynomial.polynomial.polyfit(nodes, np.arctanh(np.sqrt(nodes)) / np.sqrt(nodes), 4)
print(f"refit: {[float(c) for c in refit]}; equal to the constants: {np.allclose(refit, coef, rtol=0, atol=1e-15)}")
taylor = sum(t ** k / (2 * k + 1) for k in range(5))
print(f"Taylor of the same degree: max rel err {np.abs(taylor / exact - 1).max():.2e}")
