"""Torch model of stage 1's diagonal-block inverse (chunk_intra.py) under the H200's tf32 MMA, which
truncates fp32 operands to tf32 (dot_operands.py): relative Frobenius error against the fp64 inverse
of I + L for 16x16 blocks L_ij = beta_i sum_d k_id k_jd e^{G_id - G_jd} (j < i), with L2-normed keys
of pairwise correlation `corr`, beta = sigmoid(randn), softplus gates with exp(A_log) up to e^5 or the
lower-bound gate at -5. Rows:
  subst fp32        forward substitution in fp32 (main)
  subst->trunc      the same, then truncated to tf32 as the products N = D A_off, Tinv = (I - N) D see it
  dbl L rna->trunc  (I - L)(I + L^2)(I + L^4)(I + L^8) with L rounded to tf32 once, every product's
                    operands truncated, I - L + L^2 summed in fp32 (the candidate), then truncated
Products: exact products of the (rounded or truncated) operands, fp32 result.
``--stress`` adds blocks near beta times the strictly lower triangle of ones: keys of one direction
(noise 0.01-0.1 of it), constant decays of 0.01-0.5 per step, beta ~0.5, ~1 or ~2 (allow_neg_eigval),
where the powers of L grow (L^8 up to ~6e3 beta^8) while the inverse stays O(1).

    python3 inverse_products_model.py [--stress]
"""
import sys

import torch

from kimiops.testing import tf32_rounded


def trunc(x):
    """fp32 ``x`` truncated to tf32 (the low 13 significand bits cleared), as the MMA reads it."""
    return (x.float().contiguous().view(torch.int32) & -0x2000).view(torch.float32)


def mm(a, b):
    return (trunc(a).double() @ trunc(b).double()).float()


def subst(L):
    D = torch.eye(L.shape[-1]).expand_as(L).clone()
    for j in range(L.shape[-1]):
        D = D - L[..., :, j:j + 1] * D[..., j:j + 1, :]
    return D


def products(L):
    L = tf32_rounded(L)
    L2 = mm(L, L)
    L4 = mm(L2, L2)
    L8 = mm(L4, L4)
    D = torch.eye(L.shape[-1]) - L + L2 - mm(L, L2)
    D = D + mm(D, L4)
    return D + mm(D, L8)


def blocks(corr, lb, seed, nb=4096, K=128, rows=16):
    torch.manual_seed(seed)
    k = corr * torch.randn(nb, 1, K) + (1 - corr) * torch.randn(nb, rows, K)
    k = (k / k.norm(dim=-1, keepdim=True)).double()
    beta = torch.sigmoid(torch.randn(nb, rows)).double()
    graw = torch.randn(nb, rows, K) * 2 - 2
    if lb is None:
        g = -torch.exp(torch.rand(nb, 1, 1) * 5) * torch.nn.functional.softplus(graw)
    else:
        g = lb * torch.sigmoid(graw)
    G = g.double().cumsum(1)
    E = torch.exp((G[:, :, None, :] - G[:, None, :, :]).clamp(max=0))
    L = torch.tril((k[:, :, None, :] * k[:, None, :, :] * E).sum(-1), -1) * beta[:, :, None]
    return L


def main():
    for seed in (0, 1):
        for corr in (0.0, 0.5, 0.8, 0.95):
            for lb in (None, -5.0):
                L = blocks(corr, lb, seed)
                exact = torch.linalg.inv(torch.eye(16, dtype=torch.float64) + L)
                Lf = L.float()
                rows = {"subst fp32": subst(Lf), "subst->trunc": trunc(subst(Lf)),
                        "dbl L rna->trunc": trunc(products(Lf))}
                errs = " ".join(f"{n}: {((d.double() - exact).norm() / exact.norm()).item():.2e}" for n, d in rows.items())
                print(f"seed {seed} corr {corr} gate {'softplus' if lb is None else 'lower bound -5'}: "
                      f"max|L| {L.abs().max().item():.2f}  {errs}", flush=True)


def stress(nb=2048, K=128):
    for noise in (0.1, 0.01):
        for gstep in (-0.01, -0.1, -0.5):
            for bscale in (0.5, 1.0, 2.0):
                torch.manual_seed(0)
                k = torch.randn(nb, 1, K) + noise * torch.randn(nb, 16, K)
                k = (k / k.norm(dim=-1, keepdim=True)).double()
                beta = (bscale * torch.sigmoid(torch.randn(nb, 16) + 3)).double()
                G = torch.full((nb, 16, K), gstep, dtype=torch.float64).cumsum(1)
                E = torch.exp((G[:, :, None, :] - G[:, None, :, :]).clamp(max=0))
                L = torch.tril((k[:, :, None, :] * k[:, None, :, :] * E).sum(-1), -1) * beta[:, :, None]
                exact = torch.linalg.inv(torch.eye(16, dtype=torch.float64) + L)
                Lf = L.float()
                e1 = ((trunc(subst(Lf)).double() - exact).norm() / exact.norm()).item()
                e2 = ((trunc(products(Lf)).double() - exact).norm() / exact.norm()).item()
                print(f"stress: key noise {noise} g/step {gstep} beta ~{bscale}: max|L| {L.abs().max():.2f} "
                      f"max|D| {exact.abs().max():.2f}  subst->trunc {e1:.2e}  dbl L rna->trunc {e2:.2e}", flush=True)


if __name__ == "__main__":
    main()
    if "--stress" in sys.argv:
        stress()
