"""Torch model of stage 1's diagonal-block inverse (chunk_intra.py ``_diag_block_inverse``) under the
H200's tf32 MMA (fp32 operands truncated to tf32, exact products, fp32 results): forward substitution
on the sub-blocks of BASE rows, then per level the exact 2x2-block formula (I - D Q) D as two
products, against main (substitution over all 16 rows). Relative Frobenius error against the fp64
inverse of I + L, every candidate truncated at the end as the chunk-level products N = D A_off,
Tinv = (I - N) D read it. ``rna``: the level products' operands rounded to nearest tf32 first;
``x3+rna``: each level's first product (N = D Q) in tf32x3 (fp32-accurate), the second rounded (the
candidate of exp/blocked-inverse). ``chunk`` rows: the whole 32-row chunk inverse as tb carries it
(``rna32``: the chunk-level products' operands rounded too). Same blocks as ``cpu_checks_20261204_s42/inverse_products_model.py``:
random keys of pairwise correlation 0-0.95 with softplus or lower-bound gates, and with ``--stress``
aligned keys with slow decay (beta ~0.5, ~1, ~2), where power-series inverses failed.

    python3 blocked_inverse_model.py [--stress]
"""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "cpu_checks_20261204_s42"))
from inverse_products_model import blocks, mm, subst, trunc  # noqa: E402

from kimiops.testing import tf32_rounded  # noqa: E402


def mm_rna(a, b):
    """A product whose operands were rounded to nearest tf32 first (``tf32_rna``; the MMA's truncation
    then changes nothing)."""
    return (tf32_rounded(a).double() @ tf32_rounded(b).double()).float()


def mm_x3(a, b):
    """A tf32x3 product (three tf32 MMAs over hi / lo splits): fp32-accurate, modelled as exact."""
    return (a.double() @ b.double()).float()


def blocked(L, base, prod=mm, first=None):
    """The kernel's form: sub-blocks of ``base`` rows by substitution, then doubling levels whose
    products are ``prod`` (``mm``: operands truncated; ``mm_rna``: rounded to nearest), the first of
    each level (``N = D Q``) ``first`` if given."""
    first = first or prod
    n = L.shape[-1]
    idx = torch.arange(n)
    same = (idx[:, None] // base) == (idx[None, :] // base)
    D = subst(L * same)          # substitution restricted to the sub-blocks (what the paired steps compute)
    eye = torch.eye(n)
    s = base
    while s < n:
        q = ((idx[:, None] // (2 * s)) == (idx[None, :] // (2 * s))) & (idx[:, None] % (2 * s) >= s) & (idx[None, :] % (2 * s) < s)
        D = prod(eye - first(D, L * q), D)
        s *= 2
    return D


def err(D, exact):
    return ((trunc(D).double() - exact).norm() / exact.norm()).item()


def report(label, L):
    exact = torch.linalg.inv(torch.eye(16, dtype=torch.float64) + L)
    Lf = L.float()
    errs = {"main": err(subst(Lf), exact)}
    for base in (8, 4, 2):
        errs[f"base {base}"] = err(blocked(Lf, base), exact)
    for base in (8, 4):
        errs[f"base {base} rna"] = err(blocked(Lf, base, mm_rna), exact)
    errs["base 8 x3+rna"] = err(blocked(Lf, 8, mm_rna, mm_x3), exact)
    print(f"{label}: max|L| {L.abs().max().item():.2f} max|D| {exact.abs().max().item():.2f}  "
          + "  ".join(f"{k} {v:.2e}" for k, v in errs.items()), flush=True)


def stress_blocks(noise, gstep, bscale, nb=2048, K=128, rows=16):
    torch.manual_seed(0)
    k = torch.randn(nb, 1, K) + noise * torch.randn(nb, rows, K)
    k = (k / k.norm(dim=-1, keepdim=True)).double()
    beta = (bscale * torch.sigmoid(torch.randn(nb, rows) + 3)).double()
    G = torch.full((nb, rows, K), gstep, dtype=torch.float64).cumsum(1)
    E = torch.exp((G[:, :, None, :] - G[:, None, :, :]).clamp(max=0))
    return torch.tril((k[:, :, None, :] * k[:, None, :, :] * E).sum(-1), -1) * beta[:, :, None]


def chunk_inverse(L, diag_inverse, prod=mm):
    """The whole chunk's ``(I + L)^-1`` for 32 rows as stage 1 forms it: the two 16x16 diagonal
    blocks by ``diag_inverse``, then ``Tinv = (I - N) D`` with ``N = D A_off`` (products ``prod``)."""
    D = torch.zeros_like(L)
    D[..., :16, :16] = diag_inverse(L[..., :16, :16])
    D[..., 16:, 16:] = diag_inverse(L[..., 16:, 16:])
    A_off = torch.zeros_like(L)
    A_off[..., 16:, :16] = L[..., 16:, :16]
    return prod(torch.eye(32) - prod(D, A_off), D)


def report_chunk(label, L):
    """Errors of the whole chunk's inverse (what tb carries) for main and the blocked forms."""
    exact = torch.linalg.inv(torch.eye(32, dtype=torch.float64) + L)
    Lf = L.float()
    errs = {"main": err(chunk_inverse(Lf, subst), exact),
            "main rna32": err(chunk_inverse(Lf, subst, mm_rna), exact)}
    for base in (8, 4):
        errs[f"base {base}"] = err(chunk_inverse(Lf, lambda x: blocked(x, base)), exact)
        errs[f"base {base} rna"] = err(chunk_inverse(Lf, lambda x: blocked(x, base, mm_rna)), exact)
        errs[f"base {base} rna rna32"] = err(chunk_inverse(Lf, lambda x: blocked(x, base, mm_rna), mm_rna), exact)
    errs["base 8 x3+rna"] = err(chunk_inverse(Lf, lambda x: blocked(x, 8, mm_rna, mm_x3)), exact)
    print(f"chunk {label}: max|Tinv| {exact.abs().max().item():.2f}  "
          + "  ".join(f"{k} {v:.2e}" for k, v in errs.items()), flush=True)


def main():
    for seed in (0, 1):
        for corr in (0.0, 0.5, 0.8, 0.95):
            for lb in (None, -5.0):
                report(f"seed {seed} corr {corr} gate {'softplus' if lb is None else 'lower bound -5'}",
                       blocks(corr, lb, seed))
    for seed in (0, 1):
        for corr in (0.0, 0.8, 0.95):
            for lb in (None, -5.0):
                report_chunk(f"seed {seed} corr {corr} gate {'softplus' if lb is None else 'lower bound -5'}",
                             blocks(corr, lb, seed, nb=1024, rows=32))
    if "--stress" in sys.argv:
        for noise in (0.1, 0.01):
            for gstep in (-0.01, -0.1, -0.5):
                for bscale in (0.5, 1.0, 2.0):
                    report(f"stress: key noise {noise} g/step {gstep} beta ~{bscale}", stress_blocks(noise, gstep, bscale))
        for noise in (0.1, 0.01):
            for gstep in (-0.01, -0.1, -0.5):
                for bscale in (0.5, 1.0, 2.0):
                    report_chunk(f"stress: key noise {noise} g/step {gstep} beta ~{bscale}",
                                 stress_blocks(noise, gstep, bscale, nb=1024, rows=32))


if __name__ == "__main__":
    main()
