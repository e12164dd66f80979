"""flash-linear-attention's and vLLM's extra keywords (``kimiops.kda.fla_options``): speculative
verification over a pool (``ssm_state_indices [N, T_max]`` with ``num_accepted_tokens``),
``allow_neg_eigval``, and the prefill keywords that change nothing but must be accepted or refused
clearly.

CPU: the kernels run in Triton's interpreter (fp32); GPU (``gpu`` marker): bf16 at serving shapes,
in a CUDA graph and through the eager shortcut.
"""

import pytest
import torch

import kimiops
from kimiops.kda.gate import beta_from_logits, kda_gate, l2norm
from kimiops.kda.reference import naive_chunk_kda, naive_recurrent_kda
from kimiops.testing import make_kda_inputs, rel_err


def _bits(t):
    return t.view({torch.float32: torch.int32, torch.bfloat16: torch.int16}[t.dtype])


def _spec_case(gen, *, lengths, t_max, H, HV, K, V, dtype, device, v_first=True, slots=None, pad=-1):
    """Raw decode inputs of a speculative batch (varlen), a NaN-poisoned pool, [N, t_max] slots and
    num_accepted_tokens; one request is padding (start slot ``pad``), a token column is -1. With
    ``pad=0`` (vLLM's null block) no real slot is 0."""
    N = len(lengths)
    T = sum(lengths)
    cu = torch.tensor([0] + lengths).cumsum(0).to(torch.int32)
    q, k = torch.randn(1, T, H, K, generator=gen) * 2, torch.randn(1, T, H, K, generator=gen)
    v = torch.randn(1, T, HV, V, generator=gen)
    g_raw = torch.randn(1, T, HV, K, generator=gen) * 3
    b_raw = torch.randn(1, T, HV, generator=gen)
    A_log = torch.log(torch.rand(HV, generator=gen) * 10 + 1)
    dt_bias = torch.randn(HV * K, generator=gen)
    slots = slots or N * t_max + 3
    perm = torch.randperm(slots - (pad + 1), generator=gen) + pad + 1
    idx = perm[:N * t_max].view(N, t_max).to(torch.int32).clone()
    acc = torch.randint(1, t_max + 1, (N,), generator=gen, dtype=torch.int32)
    idx[1, :] = pad  # a padded request (its start slot is padding)
    idx[0, t_max - 1] = -1  # a token whose state the engine does not keep
    shape = (HV, V, K) if v_first else (HV, K, V)
    pool = torch.full((slots, *shape), float("nan"))
    for n in range(N):
        s = int(idx[n, acc[n] - 1])
        if s > pad:
            pool[s] = torch.randn(shape, generator=gen) * 0.5
    raw = dict(q=q.to(dtype), k=k.to(dtype), v=v.to(dtype), g=g_raw.to(dtype), beta=b_raw.to(dtype))
    dev = {n: t.to(device) for n, t in raw.items()}
    return dict(raw=raw, dev=dev, cu=cu, idx=idx, acc=acc, pool=pool, A_log=A_log, dt_bias=dt_bias, N=N, pad=pad)


def _spec_oracle(c, scale, v_first, allow_neg_eigval=False):
    """fp64 outputs and the state after every token row, per the raw inputs the kernel saw."""
    r = {n: t.double() for n, t in c["raw"].items()}
    q, k = l2norm(r["q"]), l2norm(r["k"])
    g = kda_gate(r["g"], c["A_log"].double(), c["dt_bias"].double(), None, output_dtype=torch.float64)
    beta = beta_from_logits(r["beta"], allow_neg_eigval)
    h0 = torch.zeros(c["N"], *c["pool"].shape[1:], dtype=torch.float64)
    for n in range(c["N"]):
        s = int(c["idx"][n, c["acc"][n] - 1])
        if s > c["pad"]:
            h0[n] = c["pool"][s].double()
    o, _, after = naive_recurrent_kda(q, k, r["v"], g, beta, scale=scale, initial_state=h0, output_final_state=True,
                                      cu_seqlens=c["cu"], state_v_first=v_first, token_states=True)
    return o, after


def _check_spec(c, o, pool, scale, v_first, tol_o, tol_s, allow_neg_eigval=False):
    o_ref, after = _spec_oracle(c, scale, v_first, allow_neg_eigval)
    bounds = c["cu"].tolist()
    pool = pool.cpu()
    written = set()
    o = o.cpu()
    for n in range(c["N"]):
        a, b = bounds[n], bounds[n + 1]
        if int(c["idx"][n, c["acc"][n] - 1]) <= c["pad"]:  # padding: zero output, no state written
            assert torch.equal(o[0, a:b], torch.zeros_like(o[0, a:b]))
            o_ref[0, a:b] = 0
            continue
        for t in range(b - a):
            s = int(c["idx"][n, t])
            if s > c["pad"]:
                written.add(s)
                assert rel_err(pool[s], after[0, a + t]) < tol_s, (n, t)
    assert rel_err(o, o_ref) < tol_o
    before = c["pool"]
    for s in range(pool.shape[0]):
        if s not in written:  # every slot not written this call keeps its bits (NaN poison included)
            assert torch.equal(_bits(pool[s]), _bits(before[s].to(pool.dtype))), f"slot {s} touched"


@pytest.mark.parametrize("v_first", [True, False])
@pytest.mark.parametrize("with_acc", [True, False])
def test_speculative_pool_matches_token_oracle(device, v_first, with_acc):
    gen = torch.Generator().manual_seed(3)
    c = _spec_case(gen, lengths=[3, 2, 0, 4, 1], t_max=4, H=2, HV=4, K=16, V=16, dtype=torch.float32,
                   device=device, v_first=v_first)
    if not with_acc:
        c["acc"] = torch.ones_like(c["acc"])  # no num_accepted_tokens: column 0 is the start slot
        for n in range(c["N"]):
            s = int(c["idx"][n, 0])
            if s >= 0 and c["pool"][s].isnan().all():
                c["pool"][s] = torch.randn(c["pool"].shape[1:], generator=gen)
    for backend in ("torch", "triton"):
        pool = c["pool"].clone().to(device)
        o, ret = kimiops.fused_recurrent_kda(
            **c["dev"], initial_state=pool, output_final_state=True, use_qk_l2norm_in_kernel=True,
            use_gate_in_kernel=True, use_beta_sigmoid_in_kernel=True, A_log=c["A_log"].to(device),
            dt_bias=c["dt_bias"].to(device), state_v_first=v_first, cu_seqlens=c["cu"].to(device),
            ssm_state_indices=c["idx"].to(device), num_accepted_tokens=c["acc"].to(device) if with_acc else None,
            inplace_final_state=True, backend=backend,
        )
        assert ret is pool
        _check_spec(c, o, pool, 16 ** -0.5, v_first, tol_o=2e-5, tol_s=2e-5)


def test_speculative_pool_with_vllm_null_block(device):
    """``pad_slot_id=0``: a request whose start slot is 0 (vLLM's null block) is padding, token
    columns of 0 or -1 keep no state, and slot 0 (NaN-poisoned) is never read or written."""
    gen = torch.Generator().manual_seed(4)
    c = _spec_case(gen, lengths=[3, 2, 0, 4, 1], t_max=4, H=2, HV=4, K=16, V=16, dtype=torch.float32,
                   device=device, pad=0)
    c["idx"][3, 3] = 0  # a token column on the null block
    for backend in ("torch", "triton"):
        pool = c["pool"].clone().to(device)
        o, _ = kimiops.fused_recurrent_kda(
            **c["dev"], initial_state=pool, use_qk_l2norm_in_kernel=True, use_gate_in_kernel=True,
            use_beta_sigmoid_in_kernel=True, A_log=c["A_log"].to(device), dt_bias=c["dt_bias"].to(device),
            state_v_first=True, cu_seqlens=c["cu"].to(device), ssm_state_indices=c["idx"].to(device),
            num_accepted_tokens=c["acc"].to(device), pad_slot_id=0, backend=backend,
        )
        assert pool[0].isnan().all()
        _check_spec(c, o, pool, 16 ** -0.5, True, tol_o=2e-5, tol_s=2e-5)


@pytest.mark.parametrize("backend", ["torch", "triton"])
def test_pad_slot_id_zero_is_index_minus_one(device, backend):
    """One token per request: index 0 with ``pad_slot_id=0`` gives the bits of index -1 without it
    (zero output rows, no state read or written); the other rows are untouched by the choice."""
    gen = torch.Generator().manual_seed(6)
    x = make_kda_inputs(4, 1, 2, 16, 16, HV=4, generator=gen, device=device)
    pool = torch.randn(8, 4, 16, 16, generator=gen).to(device)
    pool[0] = float("nan")
    outs = {}
    for pad, padded in ((0, 0), (-1, -1)):
        p = pool.clone()
        idx = torch.tensor([3, padded, 5, -1], dtype=torch.int32, device=device)
        o, _ = kimiops.fused_recurrent_kda(x.q, x.k, x.v, x.g, x.beta, initial_state=p, state_v_first=True,
                                           ssm_state_indices=idx, pad_slot_id=pad, backend=backend)
        outs[pad] = (o, p)
    (o0, p0), (o1, p1) = outs[0], outs[-1]
    assert torch.equal(_bits(o0), _bits(o1)) and torch.equal(_bits(p0), _bits(p1))
    assert torch.equal(o0[1], torch.zeros_like(o0[1])) and p0[0].isnan().all()
    assert not torch.equal(p0[3], pool[3])  # a real request's slot was updated


def test_pad_slot_id_bad_values():
    x = make_kda_inputs(2, 1, 1, 16, 16)
    pool = torch.zeros(4, 1, 16, 16)
    idx = torch.tensor([1, 0], dtype=torch.int32)
    call = lambda **kw: kimiops.fused_recurrent_kda(x.q, x.k, x.v, x.g, x.beta, state_v_first=True, **kw)  # noqa: E731
    with pytest.raises(ValueError, match="pad_slot_id: expected -1 or 0, got 1"):
        call(initial_state=pool, ssm_state_indices=idx, pad_slot_id=1)
    with pytest.raises(TypeError, match="pad_slot_id: expected an int, got bool"):
        call(initial_state=pool, ssm_state_indices=idx, pad_slot_id=False)
    with pytest.raises(ValueError, match="pad_slot_id: 0 marks slot 0 .* needs ssm_state_indices, got None"):
        call(initial_state=torch.zeros(2, 1, 16, 16), pad_slot_id=0)
    # padding may repeat: 0 twice is fine with pad_slot_id=0, a duplicate slot without it
    both = torch.tensor([0, 0], dtype=torch.int32)
    call(initial_state=pool, ssm_state_indices=both, pad_slot_id=0)
    with pytest.raises(ValueError, match=r"distinct slots for distinct sequences \(-1 may repeat\)"):
        call(initial_state=pool, ssm_state_indices=both)


def test_speculative_state_of_token_t_is_the_prefix_decode(device):
    """The state left in slot [n, t] is what a decode of the first t + 1 tokens leaves, and
    resuming from it with the remaining tokens gives the longer decode's output."""
    gen = torch.Generator().manual_seed(5)
    x = make_kda_inputs(1, 3, 1, 16, 16, HV=2, generator=gen, device=device)
    pool = torch.randn(6, 2, 16, 16, generator=gen).to(device)
    idx = torch.tensor([[1, 4, 2]], dtype=torch.int32, device=device)
    acc = torch.tensor([1], dtype=torch.int32, device=device)
    spec = pool.clone()
    o_spec, _ = kimiops.fused_recurrent_kda(x.q, x.k, x.v, x.g, x.beta, initial_state=spec, state_v_first=True,
                                            ssm_state_indices=idx, num_accepted_tokens=acc, backend="triton")
    for t, slot in enumerate(idx[0].tolist()):
        ref = pool.clone()
        o_pre, _ = kimiops.fused_recurrent_kda(x.q[:, :t + 1], x.k[:, :t + 1], x.v[:, :t + 1], x.g[:, :t + 1],
                                               x.beta[:, :t + 1], initial_state=ref, state_v_first=True,
                                               ssm_state_indices=idx[:, 0].contiguous(), backend="triton")
        assert rel_err(spec[slot], ref[1]) < 1e-5
        assert rel_err(o_spec[:, :t + 1], o_pre) < 1e-5


@pytest.mark.parametrize("op_name", ["chunk_kda", "fused_recurrent_kda"])
def test_allow_neg_eigval_doubles_beta(device, op_name):
    gen = torch.Generator().manual_seed(7)
    x = make_kda_inputs(2, 40, 1, 16, 16, HV=2, generator=gen, device=device)
    b_logit = torch.logit(x.beta.cpu().double().clamp(0.05, 0.95)).float().to(device)
    h0 = torch.randn(2, 2, 16, 16, generator=gen).to(device)
    op = getattr(kimiops, op_name)
    o, ht = op(x.q, x.k, x.v, x.g, b_logit, initial_state=h0, output_final_state=True,
               use_beta_sigmoid_in_kernel=True, allow_neg_eigval=True, backend="triton")
    q, k, v, g, _ = (t.cpu() for t in x.oracle_args())  # the oracle runs on the CPU, in fp64
    oracle = naive_chunk_kda if op_name == "chunk_kda" else naive_recurrent_kda
    o_ref, s_ref = oracle(q, k, v, g, 2 * torch.sigmoid(b_logit.cpu().double()), initial_state=h0.cpu().double(),
                          output_final_state=True)
    tol = 3e-3 if op_name == "chunk_kda" else 1e-4  # the chunk kernels' products run at fp16 / tf32
    assert rel_err(o.cpu(), o_ref) < tol and rel_err(ht.cpu(), s_ref) < tol
    o_torch, _ = op(x.q, x.k, x.v, x.g, b_logit, initial_state=h0, use_beta_sigmoid_in_kernel=True,
                    allow_neg_eigval=True, backend="torch")
    assert rel_err(o_torch.cpu(), o_ref) < 1e-4
    o1, _ = op(x.q, x.k, x.v, x.g, b_logit, initial_state=h0, use_beta_sigmoid_in_kernel=True, backend="triton")
    assert rel_err(o1.cpu(), o_ref) > 1e-2  # the flag changes the result


def test_prefill_keywords_that_change_nothing_keep_the_bits(device):
    gen = torch.Generator().manual_seed(8)
    lengths = [20, 0, 13]
    cu = torch.tensor([0] + lengths).cumsum(0).to(torch.int32)
    x = make_kda_inputs(1, sum(lengths), 1, 16, 16, gate="lower_bound", raw_gate=True, generator=gen, device=device)
    base = dict(use_gate_in_kernel=True, cu_seqlens=cu.to(device), output_final_state=True, **x.gate_kwargs)
    o0, s0 = kimiops.chunk_kda(x.q, x.k, x.v, x.g, x.beta, **base)
    o1, s1 = kimiops.chunk_kda(x.q, x.k, x.v, x.g, x.beta, safe_gate=True, chunk_size=64, cu_seqlens_cpu=cu,
                               use_graph=True, max_num_seqs=3, disable_recompute=True, **base)
    assert torch.equal(o0, o1) and torch.equal(s0, s1)


@pytest.mark.parametrize("kwargs, exc, match", [
    ({"return_intermediate_states": True}, NotImplementedError, "return_intermediate_states"),
    ({"cp_context": object()}, NotImplementedError, "cp_context"),
    ({"allow_neg_eigval": True}, ValueError, "use_beta_sigmoid_in_kernel"),
    ({"allow_neg_eigval": 1}, TypeError, "allow_neg_eigval"),
    ({"safe_gate": True, "use_gate_in_kernel": True, "A_log": torch.zeros(2)}, ValueError, "lower_bound"),
    ({"chunk_size": 16}, ValueError, "chunk_size"),
    ({"cu_seqlens_cpu": torch.tensor([0, 9])}, ValueError, "without cu_seqlens"),
    ({"cu_seqlens": torch.tensor([0, 4, 9]), "cu_seqlens_cpu": torch.tensor([0, 5, 9])}, ValueError, "values"),
    ({"cu_seqlens": torch.tensor([0, 4, 9]), "use_graph": True, "max_num_seqs": 1}, ValueError, "max_num_seqs"),
    ({"cu_seqlens": torch.tensor([0, 4, 9]), "use_graph": True, "max_num_seqs": 3}, ValueError, "pad it"),
    ({"max_num_seqs": 1.5}, TypeError, "max_num_seqs"),
    ({"state_v_first": True, "transpose_state_layout": True}, ValueError, "transpose_state_layout"),
    ({"transpose_state_layout": "yes"}, TypeError, "transpose_state_layout"),
    ({"use_graph": "yes"}, TypeError, "use_graph"),
])
def test_prefill_keywords_refused_clearly(kwargs, exc, match):
    x = make_kda_inputs(1, 9, 1, 16, 16, HV=2)
    with pytest.raises(exc, match=match):
        kimiops.chunk_kda(x.q, x.k, x.v, x.g, x.beta, **kwargs)


def _cu(*bounds):
    return torch.tensor(bounds, dtype=torch.int32)


@pytest.mark.parametrize("kwargs, exc, match", [
    ({"inplace_final_state": True}, ValueError, "needs ssm_state_indices"),
    ({"inplace_final_state": False, "ssm_state_indices": torch.tensor([1, 2, 3, 4], dtype=torch.int32)},
     ValueError, "not supported"),
    ({"num_accepted_tokens": torch.ones(1, dtype=torch.int32)}, ValueError, "num_accepted_tokens"),
    ({"ssm_state_indices": torch.tensor([[1, 2], [3, 4], [5, 6], [7, 0]], dtype=torch.int32),
      "num_accepted_tokens": torch.tensor([1, 3, 1, 1], dtype=torch.int32), "cu_seqlens": _cu(0, 1, 2, 3, 4)},
     ValueError, r"values in \[1, 2\]"),
    ({"ssm_state_indices": torch.tensor([[1], [2]], dtype=torch.int32), "cu_seqlens": _cu(0, 1, 4)},
     ValueError, "longest sequence"),
    ({"ssm_state_indices": torch.tensor([[1, 2]], dtype=torch.int32),
      "num_accepted_tokens": torch.ones(2, dtype=torch.int32), "cu_seqlens": _cu(0, 4)},
     ValueError, "num_accepted_tokens: expected shape"),
])
def test_decode_keywords_refused_clearly(kwargs, exc, match):
    x = make_kda_inputs(1, 4, 1, 16, 16, HV=2)  # 4 tokens: one sequence, or 4 with cu_seqlens
    pool = torch.zeros(8, 2, 16, 16)
    q, k, v, g, beta = x.q, x.k, x.v, x.g, x.beta
    if "cu_seqlens" not in kwargs and "ssm_state_indices" in kwargs:  # batch mode: one token per sequence
        q, k, v, g, beta = (t.transpose(0, 1) for t in (q, k, v, g, beta))
    with pytest.raises(exc, match=match):
        kimiops.fused_recurrent_kda(q, k, v, g, beta, initial_state=pool, **kwargs)


def test_prefill_refuses_two_dimensional_indices():
    x = make_kda_inputs(1, 4, 1, 16, 16)
    with pytest.raises(ValueError, match=r"initial_state_indices: expected shape \[1\]"):
        kimiops.chunk_kda(x.q, x.k, x.v, x.g, x.beta, initial_state=torch.zeros(4, 1, 16, 16),
                          initial_state_indices=torch.tensor([[0, 1]], dtype=torch.int32))


@pytest.mark.parametrize("backend", ["torch", "triton"])
def test_backend_decode_speculative_matches_the_op(device, backend):
    """``KDABackend.decode`` with [N, T_max] slots and accepted counts, on a batch padded for a CUDA
    graph (3 garbage token rows past query_start_loc[-1]): the op's result on the real rows, the
    same pool bits."""
    gen = torch.Generator().manual_seed(9)
    c = _spec_case(gen, lengths=[2, 3, 1], t_max=3, H=2, HV=2, K=16, V=16, dtype=torch.float32, device=device)
    kda = kimiops.KDABackend(2, 16, 16, backend=backend)
    gate = dict(A_log=c["A_log"].to(device), dt_bias=c["dt_bias"].to(device))
    p1, p2 = c["pool"].clone().to(device), c["pool"].clone().to(device)
    d = c["dev"]
    padded = {n: torch.cat([t[0], torch.full_like(t[0][:3], 1e4)]) for n, t in d.items()}
    o1 = kda.decode(padded["q"], padded["k"], padded["v"], padded["g"], padded["beta"], ssm_states=p1,
                    cache_indices=c["idx"].to(device), query_start_loc=c["cu"].to(device),
                    num_accepted_tokens=c["acc"].to(device), **gate)
    o2, _ = kimiops.fused_recurrent_kda(**d, initial_state=p2, use_qk_l2norm_in_kernel=True, use_gate_in_kernel=True,
                                        use_beta_sigmoid_in_kernel=True, state_v_first=True,
                                        cu_seqlens=c["cu"].to(device), ssm_state_indices=c["idx"].to(device),
                                        num_accepted_tokens=c["acc"].to(device), backend=backend, **gate)
    assert o1.shape[0] == o2.shape[1] + 3
    assert torch.equal(o1[:-3], o2[0]) and torch.equal(_bits(p1.cpu()), _bits(p2.cpu()))


# ---------------------------------------------------------------- GPU
@pytest.mark.gpu
@pytest.mark.parametrize("pool_dtype", [torch.float32, torch.bfloat16])
def test_gpu_speculative_bf16_serving_shapes(pool_dtype):
    dev = torch.device("cuda")
    gen = torch.Generator().manual_seed(11)
    c = _spec_case(gen, lengths=[4, 3, 4, 1, 2, 4, 0, 3], t_max=4, H=32, HV=32, K=128, V=128,
                   dtype=torch.bfloat16, device=dev)
    c["pool"] = c["pool"].to(pool_dtype)
    pool = c["pool"].clone().to(dev)
    o, _ = kimiops.fused_recurrent_kda(
        **c["dev"], initial_state=pool, use_qk_l2norm_in_kernel=True, use_gate_in_kernel=True,
        use_beta_sigmoid_in_kernel=True, A_log=c["A_log"].to(dev), dt_bias=c["dt_bias"].to(dev), state_v_first=True,
        cu_seqlens=c["cu"].to(dev), ssm_state_indices=c["idx"].to(dev), num_accepted_tokens=c["acc"].to(dev))
    c["pool"] = c["pool"].float() if pool_dtype == torch.float32 else c["pool"]
    _check_spec(c, o.float(), pool, 128 ** -0.5, True, tol_o=1e-2, tol_s=1e-2 if pool_dtype == torch.bfloat16 else 2e-3)


@pytest.mark.gpu
def test_gpu_speculative_in_a_cuda_graph_and_the_eager_shortcut():
    """Captured once, replayed with new inputs, indices and accepted counts; and repeated eager
    calls (the shortcut's bound launch passes num_accepted_tokens): the bits of a fresh full-path call."""
    from kimiops.kda import runner

    dev = torch.device("cuda")
    gen = torch.Generator().manual_seed(12)
    cases = [_spec_case(gen, lengths=[3, 2, 4, 1], t_max=4, H=4, HV=4, K=128, V=128, dtype=torch.bfloat16,
                        device=dev, slots=40) for _ in range(3)]
    gate = dict(A_log=cases[0]["A_log"].to(dev), dt_bias=cases[0]["dt_bias"].to(dev))
    flags = dict(use_qk_l2norm_in_kernel=True, use_gate_in_kernel=True, use_beta_sigmoid_in_kernel=True,
                 state_v_first=True)

    def call(c, pool, static=None):
        """One call on case c's tensors, or on the static buffers ``(inputs, cu, idx, acc)``."""
        inputs, cu, idx, acc = static or (c["dev"], c["cu"].to(dev), c["idx"].to(dev), c["acc"].to(dev))
        return kimiops.fused_recurrent_kda(**inputs, initial_state=pool, cu_seqlens=cu, ssm_state_indices=idx,
                                           num_accepted_tokens=acc, **gate, **flags)[0]

    def fresh(c):  # full path: nothing remembered
        runner.forget_eager()
        pool = c["pool"].clone().to(dev)
        return call(c, pool), pool

    refs = [fresh(c) for c in cases]
    # eager shortcut: the second and later calls with one signature take the bound launch
    for c, (o_ref, p_ref) in zip(cases, refs):
        pool = c["pool"].clone().to(dev)
        o = call(c, pool)
        assert torch.equal(_bits(o), _bits(o_ref)) and torch.equal(_bits(pool), _bits(p_ref))
    assert runner._eager, "the eager shortcut recorded nothing"
    # CUDA graph: static buffers refilled per replay
    c0 = cases[0]
    static = ({n: t.clone() for n, t in c0["dev"].items()}, c0["cu"].to(dev), c0["idx"].to(dev), c0["acc"].to(dev))
    pool = c0["pool"].clone().to(dev)
    call(cases[0], pool, static)  # warm-up outside the capture
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        o_static = call(cases[0], pool, static)
    for c, (o_ref, p_ref) in zip(cases, refs):
        for n, t in c["dev"].items():
            static[0][n].copy_(t)
        for buf, new in zip(static[1:], (c["cu"], c["idx"], c["acc"])):
            buf.copy_(new)
        pool.copy_(c["pool"])
        graph.replay()
        torch.cuda.synchronize()
        assert torch.equal(_bits(o_static), _bits(o_ref)) and torch.equal(_bits(pool), _bits(p_ref))


def test_fla_positional_calls_fail_loudly():
    """Past ``beta`` our positions follow the issue's signature, not FLA's: a positional call
    written for FLA raises a TypeError that names the argument instead of running with its
    values in the wrong places."""
    x = make_kda_inputs(1, 4, 1, 16, 16)
    with pytest.raises(TypeError, match="A_log"):  # FLA's 12th positional is allow_neg_eigval
        kimiops.chunk_kda(x.q, x.k, x.v, x.g, x.beta, None, None, False, False, False, False, False)
    with pytest.raises(TypeError, match="scale"):  # FLA's 6th positional is A_log
        kimiops.fused_recurrent_kda(x.q, x.k, x.v, x.g, x.beta, torch.zeros(1))


def test_torch_compile_traces_speculative_calls():
    """The custom op carries num_accepted_tokens, allow_neg_eigval and pad_slot_id: fullgraph
    tracing, the pool's in-place update and the result as eager."""
    gen = torch.Generator().manual_seed(13)
    c = _spec_case(gen, lengths=[2, 3], t_max=3, H=1, HV=2, K=16, V=16, dtype=torch.float32, device="cpu", pad=0)
    c["pool"] = torch.nan_to_num(c["pool"])

    def f(q, k, v, g, beta, pool, cu, idx, acc):
        o, _ = kimiops.fused_recurrent_kda(q, k, v, g, beta, initial_state=pool, cu_seqlens=cu, state_v_first=True,
                                           use_qk_l2norm_in_kernel=True, use_gate_in_kernel=True,
                                           use_beta_sigmoid_in_kernel=True, allow_neg_eigval=True,
                                           A_log=c["A_log"], dt_bias=c["dt_bias"], ssm_state_indices=idx,
                                           num_accepted_tokens=acc, pad_slot_id=0)
        return o * 2

    args = [c["dev"][n] for n in ("q", "k", "v", "g", "beta")]
    pool_eager, pool_comp = c["pool"].clone(), c["pool"].clone()
    o_eager = f(*args, pool_eager, c["cu"], c["idx"], c["acc"])
    o_comp = torch.compile(f, fullgraph=True, backend="aot_eager")(*args, pool_comp, c["cu"], c["idx"], c["acc"])
    torch.testing.assert_close(o_comp, o_eager)
    torch.testing.assert_close(pool_comp, pool_eager)


@pytest.mark.parametrize("op", [kimiops.chunk_kda, kimiops.fused_recurrent_kda])
def test_transpose_state_layout_is_fla_s_old_name_of_state_v_first(op):
    """FLA 0.6 still takes ``transpose_state_layout`` (deprecated, warns): the same call as
    ``state_v_first``."""
    x = make_kda_inputs(1, 5, 1, 16, 16, HV=2)
    h0 = torch.randn(1, 2, 16, 16)
    want = op(x.q, x.k, x.v, x.g, x.beta, initial_state=h0, output_final_state=True, state_v_first=True)
    with pytest.warns(DeprecationWarning, match="transpose_state_layout"):
        got = op(x.q, x.k, x.v, x.g, x.beta, initial_state=h0, output_final_state=True, transpose_state_layout=True)
    assert torch.equal(got[0], want[0]) and torch.equal(got[1], want[1])
