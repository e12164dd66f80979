"""The chunked oracle against the recurrence, in fp64, including unbounded gates."""

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kimiops.kda.reference import intra_chunk_scores, naive_chunk_kda, naive_recurrent_kda
from kimiops.testing import make_kda_inputs, rel_err


@pytest.mark.parametrize("gate", ["mild", "softplus", "lower_bound"])
def test_chunk_equals_recurrence(gate):
    gen = torch.Generator().manual_seed(0)
    x = make_kda_inputs(2, 150, 2, 32, 16, HV=4, gate=gate, dtype=torch.float64, generator=gen)
    h0 = torch.randn(2, 4, 32, 16, dtype=torch.float64, generator=gen)
    o1, s1 = naive_recurrent_kda(*x.oracle_args(), initial_state=h0, output_final_state=True)
    o2, s2 = naive_chunk_kda(*x.oracle_args(), initial_state=h0, output_final_state=True)
    assert torch.isfinite(o2).all() and torch.isfinite(s2).all()
    assert rel_err(o2, o1) < 1e-10
    assert rel_err(s2, s1) < 1e-10


def test_chunk_equals_recurrence_per_step_gates_of_3000():
    gen = torch.Generator().manual_seed(1)
    x = make_kda_inputs(1, 130, 1, 16, 16, gate="mild", dtype=torch.float64, generator=gen)
    g = -torch.rand(1, 130, 1, 16, dtype=torch.float64, generator=gen) * 3000  # spans of ~1e5 per chunk
    o1, s1 = naive_recurrent_kda(x.q, x.k, x.v, g, x.beta, output_final_state=True)
    o2, s2 = naive_chunk_kda(x.q, x.k, x.v, g, x.beta, output_final_state=True)
    assert torch.isfinite(o2).all()
    assert rel_err(o2, o1) < 1e-10 and rel_err(s2, s1) < 1e-10


def test_intra_chunk_scores_match_pairwise():
    gen = torch.Generator().manual_seed(2)
    C, K = 64, 8
    q, k = torch.randn(2, C, K, dtype=torch.float64, generator=gen), torch.randn(2, C, K, dtype=torch.float64, generator=gen)
    G = (-torch.rand(2, C, K, dtype=torch.float64, generator=gen) * 0.5).cumsum(1)
    pair = torch.einsum("bik,bjk,bijk->bij", q, k, torch.exp(G[:, :, None] - G[:, None]))
    torch.testing.assert_close(intra_chunk_scores(q, k, G, include_diagonal=True), pair.tril(0))
    torch.testing.assert_close(intra_chunk_scores(q, k, G, include_diagonal=False), pair.tril(-1))


def test_state_layouts_agree():
    gen = torch.Generator().manual_seed(3)
    x = make_kda_inputs(1, 40, 1, 16, 8, dtype=torch.float64, generator=gen)
    h0 = torch.randn(1, 1, 16, 8, dtype=torch.float64, generator=gen)
    o1, s1 = naive_chunk_kda(*x.oracle_args(), initial_state=h0, output_final_state=True)
    o2, s2 = naive_chunk_kda(*x.oracle_args(), initial_state=h0.transpose(-1, -2), output_final_state=True,
                             state_v_first=True)
    torch.testing.assert_close(o1, o2)
    torch.testing.assert_close(s1, s2.transpose(-1, -2))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    lengths=st.lists(st.integers(0, 90), min_size=1, max_size=4),
    H=st.integers(1, 2),
    G=st.sampled_from([1, 2]),
    v_first=st.booleans(),
    gate=st.sampled_from(["mild", "softplus", "lower_bound"]),
    seed=st.integers(0, 2**16),
)
def test_varlen_property(lengths, H, G, v_first, gate, seed):
    """Random lengths (zero-length included), GVA ratios, layouts: chunked == recurrent, and
    varlen == each sequence on its own."""
    gen = torch.Generator().manual_seed(seed)
    T = sum(lengths)
    x = make_kda_inputs(1, T, H, 16, 8, HV=H * G, gate=gate, dtype=torch.float64, generator=gen)
    cu = torch.tensor([0] + lengths).cumsum(0)
    shape = (len(lengths), H * G, 8, 16) if v_first else (len(lengths), H * G, 16, 8)
    h0 = torch.randn(*shape, dtype=torch.float64, generator=gen)
    kw = dict(initial_state=h0, output_final_state=True, cu_seqlens=cu, state_v_first=v_first)
    o1, s1 = naive_recurrent_kda(*x.oracle_args(), **kw)
    o2, s2 = naive_chunk_kda(*x.oracle_args(), **kw)
    assert torch.isfinite(o2).all()
    assert rel_err(o2, o1) < 1e-10 and rel_err(s2, s1) < 1e-10
    for n, (a, b) in enumerate(zip(cu[:-1].tolist(), cu[1:].tolist())):
        args = [t[:, a:b] for t in x.oracle_args()]
        o_n, s_n = naive_recurrent_kda(*args, initial_state=h0[n:n + 1], output_final_state=True, state_v_first=v_first)
        torch.testing.assert_close(o1[:, a:b], o_n)
        torch.testing.assert_close(s1[n:n + 1], s_n)
