"""KDABackend extend/decode equivalences over a poisoned pool (CPU: torch path and the interpreter; GPU: kernels)."""

from pathlib import Path

import pytest
import torch

import kimiops
from kimiops.kda.gate import kda_gate, l2norm
from kimiops.kda.reference import naive_recurrent_kda
from kimiops.testing import rel_err

H, HV, K, V = 2, 4, 16, 16


def _raw(T, gen, dtype=torch.float32, device="cpu"):
    """Raw projections of T tokens: q, k unnormalized, beta logits, softplus-gate logits."""
    q = torch.randn(T, H, K, generator=gen) * 2
    k = torch.randn(T, H, K, generator=gen) * 2
    v = torch.randn(T, HV, V, generator=gen)
    g = torch.randn(T, HV, K, generator=gen) * 3
    b = torch.randn(T, HV, generator=gen)
    return [t.to(device, dtype) for t in (q, k, v, g, b)]


def _gate(gen, device="cpu"):
    return {"A_log": torch.log(torch.rand(HV, generator=gen) * 50 + 1).to(device),
            "dt_bias": torch.randn(HV * K, generator=gen).to(device)}


def _reference(q, k, v, g, b, gate):
    g = kda_gate(g.double(), gate["A_log"].double(), gate["dt_bias"].double(), output_dtype=torch.float64)
    o, s = naive_recurrent_kda(l2norm(q.double())[None], l2norm(k.double())[None], v.double()[None], g[None],
                               torch.sigmoid(b.double())[None], output_final_state=True, state_v_first=True)
    return o[0], s[0]


def _pool(slots, device="cpu"):
    return torch.full((slots, HV, V, K), float("nan"), device=device)


def test_extend_then_decode_equals_reference_and_untouched_slots():
    gen = torch.Generator().manual_seed(0)
    be = kimiops.KDABackend(H, K, V, num_v_heads=HV)
    lengths = [7, 1, 12]
    T = sum(lengths)
    toks = _raw(T + 3, gen)  # 3 decode tokens, one per request
    gate = _gate(gen)
    pool = _pool(8)
    slots = torch.tensor([5, 2, 6], dtype=torch.int32)
    pool[slots.long()] = 0.0
    cu = torch.tensor([0, 7, 8, 20], dtype=torch.int32)
    o_ext = be.extend(*(t[:T] for t in toks), ssm_states=pool, cache_indices=slots, query_start_loc=cu, **gate)
    o_dec = be.decode(*(t[T:] for t in toks), ssm_states=pool, cache_indices=slots, **gate)
    assert o_ext.shape == (T, HV, V) and o_dec.shape == (3, HV, V)
    for n, (a, b) in enumerate(zip(cu[:-1].tolist(), cu[1:].tolist())):
        seq = [torch.cat([t[a:b], t[T + n:T + n + 1]]) for t in toks]
        o_ref, s_ref = _reference(*seq, gate)
        assert rel_err(o_ext[a:b], o_ref[:-1]) < 1e-4
        assert rel_err(o_dec[n], o_ref[-1]) < 1e-4
        assert rel_err(pool[int(slots[n])], s_ref) < 1e-4
    untouched = [s for s in range(8) if s not in (5, 2, 6)]
    assert pool[untouched].isnan().all()


def test_extend_in_pieces_equals_one_extend():
    gen = torch.Generator().manual_seed(1)
    be = kimiops.KDABackend(H, K, V, num_v_heads=HV)
    T = 10
    toks = _raw(T, gen)
    gate = _gate(gen)
    slot = torch.tensor([1], dtype=torch.int32)
    pool_one = torch.zeros(3, HV, V, K)
    o_one = be.extend(*toks, ssm_states=pool_one, cache_indices=slot,
                      query_start_loc=torch.tensor([0, T], dtype=torch.int32), **gate)
    for piece in range(1, T + 1):
        pool = torch.zeros(3, HV, V, K)
        outs = []
        for a in range(0, T, piece):
            b = min(a + piece, T)
            outs.append(be.extend(*(t[a:b] for t in toks), ssm_states=pool, cache_indices=slot,
                                  query_start_loc=torch.tensor([0, b - a], dtype=torch.int32), **gate))
        torch.testing.assert_close(torch.cat(outs), o_one, rtol=1e-4, atol=1e-5)
        torch.testing.assert_close(pool, pool_one, rtol=1e-4, atol=1e-5)


def test_padded_batch_and_trimmed_gates():
    """CUDA-graph style padding: g/beta carry extra rows, padded requests have index -1."""
    gen = torch.Generator().manual_seed(2)
    be = kimiops.KDABackend(H, K, V, num_v_heads=HV)
    q, k, v, g, b = _raw(4, gen)
    g_pad = torch.cat([g, torch.randn(4, HV, K, generator=gen)])
    b_pad = torch.cat([b, torch.randn(4, HV, generator=gen)])
    gate = _gate(gen)
    pool = _pool(6)
    idx = torch.tensor([3, -1, 0, -1], dtype=torch.int32)
    pool[[3, 0]] = 0.0
    before = pool.clone()
    o = be.decode(q[None], k[None], v[None], g_pad[None], b_pad[None], ssm_states=pool, cache_indices=idx, **gate)
    assert o.shape == (1, 4, HV, V)
    assert torch.equal(o[0, 1], torch.zeros_like(o[0, 1])) and torch.equal(o[0, 3], torch.zeros_like(o[0, 3]))
    assert pool[[1, 2, 4, 5]].isnan().all() and before[[1, 2, 4, 5]].isnan().all()
    for n, s in ((0, 3), (2, 0)):
        o_ref, s_ref = _reference(q[n:n + 1], k[n:n + 1], v[n:n + 1], g[n:n + 1], b[n:n + 1], gate)
        assert rel_err(o[0, n], o_ref[0]) < 1e-4 and rel_err(pool[s], s_ref) < 1e-4


def test_decode_of_one_token_per_request_ignores_rows_past_the_requests():
    """Batch mode (no query_start_loc): q, k, v carrying more token rows than requests (CUDA-graph
    padding) give the first N rows' results, in both input ranks, as if given exactly N rows."""
    gen = torch.Generator().manual_seed(4)
    be = kimiops.KDABackend(H, K, V, num_v_heads=HV)
    toks = _raw(5, gen)
    gate = _gate(gen)
    idx = torch.tensor([2, 0, -1], dtype=torch.int32)
    for rank3 in (False, True):
        pool, pool_ref = _pool(4), _pool(4)
        pool[[0, 2]] = pool_ref[[0, 2]] = 0.5
        given = toks if rank3 else [t[None] for t in toks]
        o = be.decode(*given, ssm_states=pool, cache_indices=idx, **gate)
        o_ref = be.decode(*(t[:3] if rank3 else t[None, :3] for t in toks), ssm_states=pool_ref, cache_indices=idx,
                          **gate)
        assert o.shape == ((3, HV, V) if rank3 else (1, 3, HV, V)) and o.shape == o_ref.shape
        assert torch.equal(o, o_ref) and torch.equal(pool.nan_to_num(7.0), pool_ref.nan_to_num(7.0))


@pytest.mark.parametrize("backend", ["torch", "triton"])
def test_extend_ignores_token_rows_past_query_start_loc(backend, device):
    """CUDA-graph padding rows after query_start_loc[-1]: the real rows and the pool as without
    them, and the padding rows' output zeros on both backends (on a GPU o's memory held NaN before)."""
    gen = torch.Generator().manual_seed(3)
    be = kimiops.KDABackend(H, K, V, num_v_heads=HV, backend=backend)
    toks = _raw(9, gen, device=device)
    gate = _gate(gen, device)
    pool = torch.zeros(2, HV, V, K, device=device)
    pool_ref = torch.zeros(2, HV, V, K, device=device)
    idx = torch.tensor([1], dtype=torch.int32, device=device)
    qsl = torch.tensor([0, 6], dtype=torch.int32, device=device)
    torch.full((9, HV, V), float("nan"), device=device)  # freed at once: o likely gets this block next
    o = be.extend(*toks, ssm_states=pool, cache_indices=idx, query_start_loc=qsl, **gate)
    o_ref = be.extend(*(t[:6] for t in toks), ssm_states=pool_ref, cache_indices=idx, query_start_loc=qsl, **gate)
    torch.testing.assert_close(o[:6], o_ref)
    torch.testing.assert_close(pool, pool_ref)
    assert torch.equal(o[6:], torch.zeros_like(o[6:]))


@pytest.mark.parametrize("backend", ["torch", "triton"])
def test_decode_ignores_token_rows_past_query_start_loc(backend, device):
    """Several tokens per request with CUDA-graph padding rows after query_start_loc[-1]: the real
    rows and the pool as without the padding, on both backends (the torch path indexed past its
    sequences on such rows until the twenty-fourth session)."""
    gen = torch.Generator().manual_seed(5)
    be = kimiops.KDABackend(H, K, V, num_v_heads=HV, backend=backend)
    toks = _raw(9, gen, device=device)
    gate = _gate(gen, device)
    pool = torch.randn(4, HV, V, K, generator=gen).to(device)
    pool_ref = pool.clone()
    idx = torch.tensor([3, -1, 0], dtype=torch.int32, device=device)
    qsl = torch.tensor([0, 2, 3, 6], dtype=torch.int32, device=device)
    o = be.decode(*toks, ssm_states=pool, cache_indices=idx, query_start_loc=qsl, **gate)
    o_ref = be.decode(*(t[:6] for t in toks), ssm_states=pool_ref, cache_indices=idx, query_start_loc=qsl, **gate)
    assert o.shape[0] == 9
    torch.testing.assert_close(o[:6], o_ref, rtol=1e-6, atol=1e-6)  # the torch path may round rows of a
    torch.testing.assert_close(pool, pool_ref, rtol=1e-6, atol=1e-6)  # longer tensor differently


def test_speculative_decode_tokens_via_query_start_loc():
    gen = torch.Generator().manual_seed(4)
    be = kimiops.KDABackend(H, K, V, num_v_heads=HV)
    toks = _raw(6, gen)
    gate = _gate(gen)
    pool = torch.zeros(3, HV, V, K)
    idx = torch.tensor([2, 0], dtype=torch.int32)
    o = be.decode(*toks, ssm_states=pool, cache_indices=idx, query_start_loc=torch.tensor([0, 3, 6], dtype=torch.int32), **gate)
    for n, s in enumerate((2, 0)):
        o_ref, s_ref = _reference(*(t[3 * n:3 * n + 3] for t in toks), gate)
        assert rel_err(o[3 * n:3 * n + 3], o_ref) < 1e-4 and rel_err(pool[s], s_ref) < 1e-4


def test_bad_inputs():
    """Errors name the backend's own arguments (``ssm_states``, ``cache_indices``,
    ``query_start_loc``), not those of the ops it calls."""
    be = kimiops.KDABackend(H, K, V, num_v_heads=HV)
    gen = torch.Generator().manual_seed(5)
    toks = _raw(2, gen)
    idx = torch.tensor([0, 1], dtype=torch.int32)
    with pytest.raises(ValueError, match="ssm_states"):
        be.decode(*toks, ssm_states=torch.zeros(2, HV, K + 1, V), cache_indices=idx)
    with pytest.raises(TypeError, match="ssm_states: expected dtype"):
        be.decode(*toks, ssm_states=torch.zeros(2, HV, V, K, dtype=torch.float16), cache_indices=idx)
    with pytest.raises(TypeError, match="ssm_states: expected dtype float32"):
        be.extend(*toks, ssm_states=torch.zeros(2, HV, V, K, dtype=torch.bfloat16), cache_indices=idx[:1],
                  query_start_loc=torch.tensor([0, 2]))
    with pytest.raises(ValueError, match=r"cache_indices: expected values in \[-1, 2\)"):
        be.decode(*toks, ssm_states=torch.zeros(2, HV, V, K), cache_indices=torch.tensor([0, 2], dtype=torch.int32))
    with pytest.raises(TypeError, match="cache_indices: expected dtype"):
        be.extend(*toks, ssm_states=torch.zeros(2, HV, V, K), cache_indices=torch.tensor([0.0]),
                  query_start_loc=torch.tensor([0, 2]))
    with pytest.raises(ValueError, match=r"query_start_loc: expected query_start_loc\[-1\] <= 2"):
        be.extend(*toks, ssm_states=torch.zeros(2, HV, V, K), cache_indices=idx[:1], query_start_loc=torch.tensor([0, 3]))
    with pytest.raises(ValueError, match="q: expected shape"):
        kimiops.KDABackend(H, K + 16, V, num_v_heads=HV).decode(*toks, ssm_states=torch.zeros(2, HV, V, K + 16), cache_indices=idx)
    with pytest.raises(ValueError, match="num_v_heads"):
        kimiops.KDABackend(3, K, V, num_v_heads=4)
    q, k, v, g, b = toks  # gates of the wrong head count, one token per request (batch mode's views)
    with pytest.raises(ValueError, match="^g: expected shape"):
        be.decode(q, k, v, g[:, :1], b, ssm_states=torch.zeros(2, HV, V, K), cache_indices=idx)
    with pytest.raises(ValueError, match="^beta: expected shape"):
        be.decode(q, k, v, g, b[:, :1], ssm_states=torch.zeros(2, HV, V, K), cache_indices=idx)


def test_repr_names_kernels():
    r = repr(kimiops.KDABackend(H, K, V))
    assert "extend" in r and "decode" in r


def test_constructor_and_repr_refuse_or_report_what_cannot_run():
    with pytest.raises(ValueError, match="backend: expected one of"):
        kimiops.KDABackend(H, K, V, backend="cuda")
    with pytest.raises(TypeError, match="backend: expected a str"):
        kimiops.KDABackend(H, K, V, backend=1)
    with pytest.raises(ValueError, match="num_heads"):
        kimiops.KDABackend(True, K, V)
    # head dims without chunk kernels: forced triton is reported, auto on CPU runs torch
    assert "head dims" in repr(kimiops.KDABackend(2, 20, 20, backend="triton"))
    assert kimiops.KDABackend(2, 20, 20).kernels("cpu") == {"extend": "torch", "decode": "torch"}


def test_shape_errors_speak_in_the_callers_terms():
    """k and v of the wrong shape are named with the shapes the caller passed (rank 3 or 4), not
    the ``[N, 1, ...]`` views the ops see; extend without query_start_loc says so."""
    be = kimiops.KDABackend(H, K, V, num_v_heads=HV)
    q, k, v, g, beta = _raw(3, torch.Generator().manual_seed(7))
    pool = torch.zeros(4, HV, V, K)
    idx = torch.tensor([0, 1, 2], dtype=torch.int32)
    with pytest.raises(ValueError, match=rf"k: expected the shape of q \[3, {H}, {K}\], got \[2, {H}, {K}\]"):
        be.decode(q, k[:2], v, g, beta, ssm_states=pool, cache_indices=idx)
    with pytest.raises(ValueError, match=rf"v: expected shape \[1, 3, {HV}, {V}\]"):
        be.decode(q[None], k[None], v[None, :, :1], g[None], beta[None], ssm_states=pool, cache_indices=idx)
    with pytest.raises(ValueError, match="query_start_loc: extend needs"):
        be.extend(q, k, v, g, beta, ssm_states=pool, cache_indices=idx, query_start_loc=None)


def test_non_tensor_inputs_name_the_argument():
    be = kimiops.KDABackend(H, K, V, num_v_heads=HV)
    toks = list(_raw(2, torch.Generator().manual_seed(6)))
    toks[1] = [1.0]
    with pytest.raises(TypeError, match="k: expected a torch.Tensor"):
        be.decode(*toks, ssm_states=torch.zeros(2, HV, V, K), cache_indices=torch.tensor([0, 1], dtype=torch.int32))


@pytest.mark.parametrize("backend", ["torch", "triton"])
def test_empty_batches(backend):
    """Two requests without tokens (extend) and a decode of no request: nothing runs, the pool
    stays as it was."""
    be = kimiops.KDABackend(H, K, V, num_v_heads=HV, backend=backend)
    pool = torch.randn(3, HV, V, K)
    before = pool.clone()
    none = (torch.zeros(0, H, K), torch.zeros(0, H, K), torch.zeros(0, HV, V), torch.zeros(0, HV, K), torch.zeros(0, HV))
    o = be.extend(*none, ssm_states=pool, cache_indices=torch.tensor([0, 1], dtype=torch.int32),
                  query_start_loc=torch.zeros(3, dtype=torch.int32))
    assert o.shape == (0, HV, V)
    o = be.decode(*none, ssm_states=pool, cache_indices=torch.zeros(0, dtype=torch.int32))
    assert o.shape == (0, HV, V) and torch.equal(pool, before)


@pytest.mark.gpu
def test_cuda_graph_decode_padded_batch_replays_with_new_inputs():
    """Capture backend.decode for a padded batch of 8, replay with new indices and inputs."""
    dev = "cuda"
    Hh, Kk = 32, 128
    be = kimiops.KDABackend(Hh, Kk, Kk)
    gen = torch.Generator().manual_seed(6)
    slots = 24

    def inputs():
        q = torch.randn(8, Hh, Kk, generator=gen).to(dev, torch.bfloat16)
        k = torch.randn(8, Hh, Kk, generator=gen).to(dev, torch.bfloat16)
        v = torch.randn(8, Hh, Kk, generator=gen).to(dev, torch.bfloat16)
        g = (torch.randn(8, Hh, Kk, generator=gen) * 3).to(dev, torch.bfloat16)
        b = torch.randn(8, Hh, generator=gen).to(dev, torch.bfloat16)
        return q, k, v, g, b

    gate = {"A_log": torch.log(torch.rand(Hh, generator=gen) * 199 + 1).to(dev),
            "dt_bias": torch.randn(Hh * Kk, generator=gen).to(dev)}
    static = [t.clone() for t in inputs()]
    static_idx = torch.tensor([0, 1, 2, 3, 4, -1, -1, -1], dtype=torch.int32, device=dev)
    pool = torch.randn(slots, Hh, Kk, Kk, generator=gen).to(dev)

    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):  # warm-up (compilation) outside the capture
        be.decode(*static, ssm_states=pool.clone(), cache_indices=static_idx, **gate)
    torch.cuda.current_stream().wait_stream(s)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_out = be.decode(*static, ssm_states=pool, cache_indices=static_idx, **gate)

    for idx in ([7, 3, 11, -1, 20, 5, -1, 9], [-1, -1, 2, 23, 0, 1, 4, 6]):
        new = inputs()
        for dst, src in zip(static, new):
            dst.copy_(src)
        static_idx.copy_(torch.tensor(idx, dtype=torch.int32))
        pool.copy_(torch.randn(slots, Hh, Kk, Kk, generator=gen).to(dev))
        pool_eager = pool.clone()
        o_eager = be.decode(*new, ssm_states=pool_eager, cache_indices=static_idx.clone(), **gate)
        graph.replay()
        torch.cuda.synchronize()
        assert torch.equal(static_out, o_eager)
        assert torch.equal(pool, pool_eager)


@pytest.mark.parametrize("backend", ["triton", "torch"])
def test_engine_steps_with_changing_batches_match_the_recurrence(backend, device, monkeypatch):
    """``benchmarks/tools/fuzz_serving_steps.py``: simulated engines (requests arriving into zeroed
    slots, prefill in pieces, decode batches whose composition, order and size change every step,
    padded requests and NaN padding rows, speculative rounds through ``target_verify`` with an accepted
    token's state kept, finished requests' slots poisoned) against an fp64 model of every request's
    state; free slots stay untouched. On the GPU the repeated calls take the eager
    shortcut, so cached launches must follow the changing batches."""
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[2] / "benchmarks" / "tools"))
    import fuzz_serving_steps

    # seeds 1 / 4 / 5 draw the softplus / lower-bound / softplus gate (bf16 on the GPU), 0 a precomputed one
    seeds, steps = ((0, 1, 4, 5), 30) if device.type == "cuda" else ((1, 4), 10)
    report = []
    failed = sum(fuzz_serving_steps.simulate(steps, seed, device=device, backend=backend, verify=0.3,
                                             out=report.append) for seed in seeds)
    assert failed == 0, report[:3]
