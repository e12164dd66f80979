"""Target verification as SGLang runs it (``KDABackend.target_verify``, kimiops/kda/verify.py).

Per-token states go to a buffer ``[rows, cache_steps, HV, V, K]``, the pool is read only; chains
of draft tokens and trees (``retrieve_parent_token``). CPU: the torch path and the decode kernel in
Triton's interpreter (fp32) against the fp64 token oracle and against the vLLM form of the same
step; GPU (``gpu`` marker): bf16 at 32 heads, fp32 and bf16 buffers, chains and a tree, a CUDA
graph replayed with new inputs.
"""

from __future__ import annotations

import pytest
import torch

import kimiops
from kimiops.kda.gate import kda_gate, l2norm
from kimiops.kda.reference import naive_recurrent_kda
from kimiops.testing import rel_err

NAN = float("nan")


def _step(lengths, H, HV, K, V, slots, seed, device="cpu", dtype=torch.float32, extra_rows=3):
    """Raw projections of one verify step (token-major ``[T, ...]`` plus CUDA-graph padding rows in
    g and beta), gate parameters, a random V-first pool and ``query_start_loc``."""
    gen = torch.Generator().manual_seed(seed)
    T = sum(lengths)

    def rnd(*shape, s=1.0):
        return (torch.randn(*shape, generator=gen) * s).to(device)

    x = dict(q=rnd(T, H, K).to(dtype), k=rnd(T, H, K).to(dtype), v=rnd(T, HV, V).to(dtype),
             g=rnd(T + extra_rows, HV, K).to(dtype), beta=rnd(T + extra_rows, HV).to(dtype),
             A_log=rnd(HV), dt_bias=rnd(HV * K))
    pool = rnd(slots, HV, V, K, s=0.5)
    qsl = torch.tensor([0] + lengths, device=device).cumsum(0).to(torch.int32)
    return x, pool, qsl


def _oracle(x, pool, start, qsl, scale, parents=None):
    """fp64 token states ``[T, HV, V, K]`` and outputs of the step from ``pool[start]`` (zeros for -1);
    ``parents`` ``[N, W]``: the requests' draft trees."""
    HV, V, K = pool.shape[1:]
    h0 = torch.stack([pool[s].double().cpu() if s >= 0 else torch.zeros(HV, V, K, dtype=torch.float64)
                      for s in start.tolist()])
    g = kda_gate(x["g"][: x["q"].shape[0]].double().cpu(), x["A_log"].double().cpu(), x["dt_bias"].double().cpu(),
                 None, output_dtype=torch.float64)
    G = HV // x["q"].shape[1]
    q, k = (l2norm(x[n].double().cpu()) for n in ("q", "k"))
    token_parents = None
    if parents is not None:
        bounds = qsl.tolist()
        token_parents = torch.zeros(1, bounds[-1], dtype=torch.int64)
        for n in range(len(bounds) - 1):
            m = bounds[n + 1] - bounds[n]
            token_parents[0, bounds[n]:bounds[n + 1]] = parents[n, :m].cpu()
    o, _, after = naive_recurrent_kda(q[None], k[None], x["v"].double().cpu()[None], g[None],
                                      torch.sigmoid(x["beta"][: x["q"].shape[0]].double().cpu())[None], scale=scale,
                                      initial_state=h0.cpu(), output_final_state=True, cu_seqlens=qsl.cpu(),
                                      state_v_first=True, token_states=True, token_parents=token_parents)
    assert G >= 1
    return o[0], after[0]


@pytest.mark.parametrize("backend", ["torch", "triton"])
def test_target_verify_matches_the_token_oracle(backend):
    """Requests of 4, 2, 0 and 3 draft tokens (cache_steps 4), the second padded (index -1), the
    last one without a buffer row (-1): each written row holds the states after the request's
    tokens, positions past its length and rows not named keep their NaN poison, the pool keeps its
    bits, the padded request's output is zero."""
    H, HV, K, V = 1, 2, 16, 16
    lengths = [4, 2, 0, 3]
    x, pool, qsl = _step(lengths, H, HV, K, V, slots=6, seed=41)
    before = pool.clone()
    start = torch.tensor([4, -1, 0, 2], dtype=torch.int32)
    rows = torch.tensor([1, 3, 0, -1], dtype=torch.int32)
    buf = torch.full((5, 4, HV, V, K), NAN)
    be = kimiops.KDABackend(H, K, V, HV, backend=backend)
    o = be.target_verify(x["q"], x["k"], x["v"], x["g"], x["beta"], ssm_states=pool, cache_indices=start,
                         query_start_loc=qsl, intermediate_states_buffer=buf, intermediate_state_indices=rows,
                         cache_steps=4, A_log=x["A_log"], dt_bias=x["dt_bias"])
    assert torch.equal(pool, before)
    o_ref, after = _oracle(x, pool, start, qsl, K**-0.5)
    assert torch.equal(o[4:6], torch.zeros_like(o[4:6]))
    keep = torch.ones(o.shape[0], dtype=torch.bool)
    keep[4:6] = False
    assert rel_err(o[keep], o_ref[keep]) < 1e-5
    assert rel_err(buf[1], after[0:4]) < 1e-5  # request 0: 4 tokens into row 1
    for r in (0, 2, 3, 4):  # the empty request's row 0, rows of no request, the padded request's row 3
        assert torch.isnan(buf[r]).all()


def test_padded_requests_may_share_a_buffer_row():
    """SGLang points every padded request (start slot -1) at one discard row; they write nothing,
    so the row keeps its poison and the live request's row is filled."""
    H, HV, K, V = 1, 1, 16, 16
    x, pool, qsl = _step([2, 2, 2], H, HV, K, V, slots=3, seed=48)
    buf = torch.full((3, 2, HV, V, K), NAN)
    o = kimiops.KDABackend(H, K, V, HV).target_verify(
        x["q"], x["k"], x["v"], x["g"], x["beta"], ssm_states=pool,
        cache_indices=torch.tensor([-1, 2, -1], dtype=torch.int32), query_start_loc=qsl,
        intermediate_states_buffer=buf, intermediate_state_indices=torch.tensor([2, 0, 2], dtype=torch.int32),
        A_log=x["A_log"], dt_bias=x["dt_bias"])
    assert torch.equal(o[[0, 1, 4, 5]], torch.zeros(4, HV, V))
    assert not torch.isnan(buf[0]).any() and torch.isnan(buf[[1, 2]]).all()


def test_target_verify_is_the_vllm_form_bit_for_bit():
    """The kernel's two speculative forms (buffer rows here, pool slots in vLLM's) give the same
    output and state bits for the same step."""
    H, HV, K, V = 1, 2, 16, 16
    lengths = [3, 3, 3]
    x, pool, qsl = _step(lengths, H, HV, K, V, slots=16, seed=42)
    be = kimiops.KDABackend(H, K, V, HV, backend="triton")
    args = (x["q"], x["k"], x["v"], x["g"], x["beta"])
    buf = torch.zeros(3, 3, HV, V, K)
    o = be.target_verify(*args, ssm_states=pool, cache_indices=torch.tensor([5, 0, 9], dtype=torch.int32),
                         query_start_loc=qsl, intermediate_states_buffer=buf,
                         intermediate_state_indices=torch.tensor([2, 0, 1], dtype=torch.int32),
                         A_log=x["A_log"], dt_bias=x["dt_bias"])
    idx = torch.tensor([[5, 10, 11], [0, 12, 13], [9, 14, 15]], dtype=torch.int32)
    o2 = be.decode(*args, ssm_states=pool, cache_indices=idx, query_start_loc=qsl, A_log=x["A_log"],
                   dt_bias=x["dt_bias"])
    assert torch.equal(o, o2)
    for n, r in enumerate((2, 0, 1)):
        assert torch.equal(buf[r, 1:], pool[idx[n, 1:].long()])
        assert torch.equal(buf[r, 0], pool[idx[n, 0].long()])


def test_torch_compile_fullgraph_keeps_the_buffer():
    H, HV, K, V = 1, 1, 16, 16
    x, pool, qsl = _step([2, 2], H, HV, K, V, slots=3, seed=43, extra_rows=0)
    be = kimiops.KDABackend(H, K, V, HV)
    start, rows = torch.tensor([2, 0], dtype=torch.int32), torch.tensor([1, 0], dtype=torch.int32)

    def f(q, k, v, g, beta, pool, buf):
        return be.target_verify(q, k, v, g, beta, ssm_states=pool, cache_indices=start, query_start_loc=qsl,
                                intermediate_states_buffer=buf, intermediate_state_indices=rows,
                                A_log=x["A_log"], dt_bias=x["dt_bias"]) * 2

    args = (x["q"], x["k"], x["v"], x["g"], x["beta"], pool)
    eager_buf, buf = torch.zeros(2, 2, HV, V, K), torch.zeros(2, 2, HV, V, K)
    o_eager = f(*args, eager_buf)
    o_comp = torch.compile(f, fullgraph=True, backend="aot_eager")(*args, buf)
    torch.testing.assert_close(o_comp, o_eager)
    torch.testing.assert_close(buf, eager_buf)
    assert buf.abs().sum() > 0


def _bad(mutate):
    H, HV, K, V = 1, 2, 16, 16
    x, pool, qsl = _step([2, 3], H, HV, K, V, slots=4, seed=44)
    kw = dict(ssm_states=pool, cache_indices=torch.tensor([1, 2], dtype=torch.int32), query_start_loc=qsl,
              intermediate_states_buffer=torch.zeros(2, 3, HV, V, K),
              intermediate_state_indices=torch.tensor([0, 1], dtype=torch.int32), A_log=x["A_log"],
              dt_bias=x["dt_bias"])
    mutate(kw)
    be = kimiops.KDABackend(H, K, V, HV)
    return lambda: be.target_verify(x["q"], x["k"], x["v"], x["g"], x["beta"], **kw)


@pytest.mark.parametrize("mutate,exc,match", [
    (lambda kw: kw.update(intermediate_state_indices=None), ValueError,
     "intermediate_state_indices: needed with intermediate_states_buffer"),
    (lambda kw: kw.update(intermediate_states_buffer=None), ValueError,
     "intermediate_states_buffer: needed with intermediate_state_indices"),
    (lambda kw: kw.update(intermediate_states_buffer=torch.zeros(2, 3, 2, 16, 16, dtype=torch.float16)), TypeError,
     "intermediate_states_buffer: expected dtype"),
    (lambda kw: kw.update(intermediate_states_buffer=torch.zeros(2, 3, 2, 16, 8)), ValueError,
     r"intermediate_states_buffer: expected shape \[rows, cache_steps, 2, 16, 16\]"),
    (lambda kw: kw.update(intermediate_states_buffer=torch.zeros(2, 3, 2, 16, 32)[..., ::2]), ValueError,
     "each state matrix must be contiguous"),
    (lambda kw: kw.update(intermediate_states_buffer=torch.zeros(2, 2, 2, 16, 16)), ValueError,
     "a request has 3 tokens, more than its cache_steps = 2"),
    (lambda kw: kw.update(intermediate_state_indices=torch.tensor([0, 2], dtype=torch.int32)), ValueError,
     r"intermediate_state_indices: expected values in \[-1, 2\)"),
    (lambda kw: kw.update(intermediate_state_indices=torch.tensor([1, 1], dtype=torch.int32)), ValueError,
     "expected distinct rows"),
    (lambda kw: kw.update(intermediate_state_indices=torch.tensor([[0, 9], [1, 9]], dtype=torch.int32)[:, 0]),
     ValueError, "intermediate_state_indices: expected a contiguous tensor"),
    (lambda kw: kw.update(cache_steps=4), ValueError, r"cache_steps: expected the buffer's second dimension \(3\)"),
    (lambda kw: kw.update(retrieve_parent_token=torch.tensor([[0, 0, 0], [0, 1, 1]], dtype=torch.int32)), ValueError,
     r"retrieve_parent_token: expected the parent of token 1 of request 1 in \[-1, 1\)"),
    (lambda kw: kw.update(retrieve_parent_token=torch.tensor([[0, 0, 0], [0, -2, 0]], dtype=torch.int32)), ValueError,
     "got -2"),
    (lambda kw: kw.update(retrieve_parent_token=torch.zeros(2, 2, dtype=torch.int32)), ValueError,
     "retrieve_parent_token: expected at least cache_steps = 3 columns"),
    (lambda kw: kw.update(retrieve_parent_token=torch.zeros(2, 3, dtype=torch.int32),
                          intermediate_state_indices=torch.tensor([0, -1], dtype=torch.int32)), ValueError,
     "request 1 needs a row"),
    (lambda kw: kw.update(cache_indices=torch.tensor([[1], [2]], dtype=torch.int32)), ValueError,
     "cache_indices: expected 1 dimensions"),
    (lambda kw: kw.update(cache_indices=torch.tensor([1, 7], dtype=torch.int32)), ValueError,
     r"cache_indices: expected values in \[-1, 4\)"),
])
def test_bad_target_verify_arguments_raise(mutate, exc, match):
    with pytest.raises(exc, match=match):
        _bad(mutate)()


@pytest.mark.parametrize("backend", ["torch", "triton"])
def test_tree_drafts_match_the_tree_oracle(backend):
    """Draft trees (``retrieve_parent_token``): request 0 the pyramid 0 -> {1, 2}, 1 -> 3; request 1
    a chain written as a tree; request 2 with token 1 going back to the pool state (-1) and token 2
    branching off token 0; its last token's state equals the oracle's along that path."""
    H, HV, K, V = 1, 2, 16, 16
    lengths = [4, 4, 3]
    x, pool, qsl = _step(lengths, H, HV, K, V, slots=5, seed=47)
    before = pool.clone()
    start = torch.tensor([2, 0, 4], dtype=torch.int32)
    rows = torch.tensor([1, 2, 0], dtype=torch.int32)
    parents = torch.tensor([[-1, 0, 0, 1], [-1, 0, 1, 2], [-1, -1, 0, 0]], dtype=torch.int32)
    buf = torch.full((3, 4, HV, V, K), NAN)
    be = kimiops.KDABackend(H, K, V, HV, backend=backend)
    o = be.target_verify(x["q"], x["k"], x["v"], x["g"], x["beta"], ssm_states=pool, cache_indices=start,
                         query_start_loc=qsl, intermediate_states_buffer=buf, intermediate_state_indices=rows,
                         retrieve_parent_token=parents, A_log=x["A_log"], dt_bias=x["dt_bias"])
    assert torch.equal(pool, before)
    o_ref, after = _oracle(x, pool, start, qsl, K**-0.5, parents)
    chain_o, _ = _oracle(x, pool, start, qsl, K**-0.5)
    assert rel_err(o, o_ref) < 1e-5
    assert rel_err(o[2:4], chain_o[2:4]) > 1e-2  # the tree changes what a chain would give
    assert rel_err(buf[1], after[0:4]) < 1e-5 and rel_err(buf[2], after[4:8]) < 1e-5
    assert rel_err(buf[0, :3], after[8:11]) < 1e-5 and torch.isnan(buf[0, 3]).all()


@pytest.mark.gpu
@pytest.mark.parametrize("tree", [False, True], ids=["chains", "tree"])
@pytest.mark.parametrize("buffer_dtype", [torch.float32, torch.bfloat16])
def test_gpu_target_verify_in_a_cuda_graph(buffer_dtype, tree):
    """bf16 projections, 32 heads, K = V = 128, 8 requests of 4 draft tokens (one padded), fp32
    pool, chains or the pyramid tree: against the fp64 oracle; then captured in a CUDA graph and
    replayed with new inputs, start slots and rows, bit for bit the eager call."""
    H = HV = 32
    K = V = 128
    lengths = [4] * 8
    x, pool, qsl = _step(lengths, H, HV, K, V, slots=12, seed=45, device="cuda", dtype=torch.bfloat16)
    start = torch.tensor([3, 0, -1, 7, 1, 11, 5, 9], dtype=torch.int32, device="cuda")
    rows = torch.tensor([7, 6, 5, 4, 3, 2, 1, 0], dtype=torch.int32, device="cuda")
    buf = torch.full((8, 4, HV, V, K), NAN, device="cuda", dtype=buffer_dtype)
    parents = torch.tensor([[-1, 0, 0, 1]] * 8, dtype=torch.int32, device="cuda") if tree else None
    be = kimiops.KDABackend(H, K, V, HV)
    call = lambda: be.target_verify(x["q"], x["k"], x["v"], x["g"], x["beta"], ssm_states=pool,  # noqa: E731
                                    cache_indices=start, query_start_loc=qsl, intermediate_states_buffer=buf,
                                    intermediate_state_indices=rows, retrieve_parent_token=parents,
                                    A_log=x["A_log"], dt_bias=x["dt_bias"])
    before = pool.clone()
    o = call()
    torch.cuda.synchronize()
    assert torch.equal(pool, before)
    o_ref, after = _oracle(x, pool, start, qsl, K**-0.5, parents)
    keep = torch.ones(o.shape[0], dtype=torch.bool)
    keep[8:12] = False
    assert rel_err(o[keep], o_ref[keep]) < 5e-3 and o[8:12].abs().max() == 0
    for n in (0, 1, 3):
        assert rel_err(buf[rows[n]], after[4 * n: 4 * n + 4]) < 5e-3
    assert torch.isnan(buf[rows[2]].float()).all()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        o_g = call()
    gen = torch.Generator(device="cuda").manual_seed(46)
    for t in (x["q"], x["k"], x["v"], x["g"], x["beta"]):
        t.copy_(torch.randn(t.shape, device="cuda", generator=gen).to(t.dtype))
    start.copy_(torch.tensor([2, -1, 4, 6, 8, 10, 0, 1], dtype=torch.int32))
    rows.copy_(torch.tensor([0, 1, 2, 3, 4, 5, 6, 7], dtype=torch.int32))
    buf.fill_(NAN)
    graph.replay()
    torch.cuda.synchronize()
    replay_o, replay_buf = o_g.clone(), buf.clone()
    buf.fill_(NAN)
    eager_o = call()
    torch.cuda.synchronize()
    assert torch.equal(replay_o, eager_o)
    assert torch.equal(replay_buf.view(torch.int8) if buffer_dtype == torch.bfloat16 else replay_buf.view(torch.int32),
                       buf.view(torch.int8) if buffer_dtype == torch.bfloat16 else buf.view(torch.int32))
    assert torch.equal(pool, before)
