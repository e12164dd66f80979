"""Stage 1's inverse of the 16x16 diagonal blocks of ``I + A_kk`` (``chunk_intra._diag_block_inverse``),
through a one-call kernel (interpreter on CPU, the GPU when present), against the fp64 inverse: every
sub-block size (``BASE`` 16 is plain forward substitution), on blocks with random keys and on the
aligned-keys, slow-decay blocks whose powers grow while their inverse stays O(1)."""

import pytest
import torch
import triton
import triton.language as tl

from kimiops.kda.gate import l2norm
from kimiops.kda.kernels.chunk_intra import INV_SUB_BLOCK, _diag_block_inverse
from kimiops.kda.reference import intra_chunk_scores
from kimiops.testing import rel_err

NS, BC = 2, 16


@triton.jit
def _inverse_kernel(a, d, NS: tl.constexpr, BC: tl.constexpr, BASE: tl.constexpr, PREC: tl.constexpr):
    offs = (tl.arange(0, NS)[:, None, None] * BC + tl.arange(0, BC)[None, :, None]) * BC \
        + tl.arange(0, BC)[None, None, :]
    tl.store(d + offs, _diag_block_inverse(tl.load(a + offs), NS, BC, BASE, PREC))


def _inverse(a, base, prec):
    d = torch.empty_like(a)
    _inverse_kernel[(1,)](a, d, NS=NS, BC=BC, BASE=base, PREC=prec)
    return d.cpu()


def _blocks(kind, seed):
    """``[NS, BC, BC]`` fp64 ``A_kk`` blocks: ``beta_i sum_d k_id k_jd e^{G_id - G_jd}`` below the
    diagonal, L2-normed keys. ``random``: independent keys, softplus-like decays, beta in (0, 1);
    ``aligned``: keys of one direction, decays of 0.01 per step, beta ~1; ``aligned2``: the same with
    beta ~2 (``allow_neg_eigval``)."""
    gen = torch.Generator().manual_seed(seed)
    K = 64
    if kind == "random":
        k = torch.randn(NS, BC, K, generator=gen, dtype=torch.float64)
        beta = torch.sigmoid(torch.randn(NS, BC, generator=gen, dtype=torch.float64))
        g = -torch.nn.functional.softplus(torch.randn(NS, BC, K, generator=gen, dtype=torch.float64) - 2)
    else:
        k = torch.randn(1, 1, K, generator=gen, dtype=torch.float64) \
            + 0.01 * torch.randn(NS, BC, K, generator=gen, dtype=torch.float64)
        beta = torch.full((NS, BC), 0.9975 * (2 if kind == "aligned2" else 1), dtype=torch.float64)
        g = torch.full((NS, BC, K), -0.01, dtype=torch.float64)
    k = l2norm(k)
    return intra_chunk_scores(k, k, g.cumsum(1), include_diagonal=False) * beta[:, :, None]


@pytest.mark.parametrize("kind", ["random", "aligned", "aligned2"])
@pytest.mark.parametrize("base", [16, 8, 4, 2])
def test_diag_block_inverse_matches_fp64(device, kind, base):
    """fp32 products (``ieee``): every sub-block size gives the inverse to fp32's precision (1e-7-1e-6
    from fp64, plain substitution included), also where the powers of the blocks grow (aligned keys:
    max |A^8| ~3e3 at beta ~1, ~7e5 at beta ~2)."""
    a = _blocks(kind, seed=base)
    exact = torch.linalg.inv(torch.eye(BC, dtype=torch.float64) + a)
    d = _inverse(a.float().to(device), base, "ieee")
    assert rel_err(d, exact) < 2e-6


# measured with sub-blocks of 4 (two levels) 2.0e-5 / 2.9e-4 / 1.8e-3, of 8 (one level) 1.9e-5 /
# 1.9e-4 / 6.9e-4 (interpreter, these inputs; cpu_checks_20261205_s48/inverse_sub_block_errors.log);
# with both level products on rounded tf32 operands the aligned blocks at beta ~2 reach
# 2.4e-3-2.8e-3 (cpu_checks_20261205_s43/inverse_level_products_probe.log), the product form of
# cpu_checks_20261204_s42 ~1e-1 and ~25 (its model)
TF32_BOUND = {"random": 1e-4, "aligned": 5e-4, "aligned2": 2.5e-3}


@pytest.mark.parametrize("kind", ["random", "aligned", "aligned2"])
def test_diag_block_inverse_with_tf32_products(device, kind):
    """The launcher's form (sub-blocks of ``INV_SUB_BLOCK`` rows, then doubling levels, each with
    ``N = Dh Qe`` in tf32x3 and the second product on operands rounded to nearest tf32): its error is
    that rounding's, about 2^-12 of the inverse's entries, where they cancel too (on the GPU the
    MMA's truncation changes nothing: the operands are tf32 already)."""
    a = _blocks(kind, seed=1)
    exact = torch.linalg.inv(torch.eye(BC, dtype=torch.float64) + a)
    d = _inverse(a.float().to(device), INV_SUB_BLOCK.value, "tf32")
    assert rel_err(d, exact) < TF32_BOUND[kind]
