"""SGLang's KDA kernel interface on kimiops (kimiops/integrations/sglang.py).

SGLang itself is not installed here: ``FakeTritonKDAKernel`` stands in for its
``TritonKDAKernel`` with the method signatures of SGLang 0.5.23 and records the calls kimiops hands
back. Inputs come as SGLang passes them (raw gate ``[T, HV * K]`` for decode and verify, ``A_log``
``[1, 1, HV, 1]``, q/k/v as views of the convolution output). CPU: the torch path and the Triton
kernels in the interpreter (fp32) against the fp64 oracle; GPU (``gpu`` marker): bf16 at 32 heads,
the same calls against the torch path, and ``packed_decode`` replayed in a CUDA graph.
"""

from __future__ import annotations

import sys
import types
from importlib.metadata import entry_points

import pytest
import torch

from kimiops.integrations import engine
from kimiops.integrations import sglang as sg
from kimiops.kda.gate import kda_gate, l2norm
from kimiops.kda.reference import naive_recurrent_kda
from kimiops.testing import rel_err

NAN = float("nan")
gpu = pytest.mark.gpu
# the chunk kernels take fp16 score operands and tf32 products (kimiops/kda/kernels/chunk_intra.py)
CHUNK_TOL = {"torch": 1e-5, "triton": 3e-3}


class FakeTritonKDAKernel:
    """SGLang 0.5.23's ``TritonKDAKernel`` interface: every call is recorded and answered with a
    marker, so a test sees which calls kimiops handed back and with what."""

    supports_packed_decode = True

    def __init__(self):
        self.handed = []

    def _record(self, name, kwargs):
        self.handed.append((name, kwargs))
        return ("sglang", name)

    def packed_decode(self, mixed_qkv, a, b, *, A_log, dt_bias, scale, ssm_states, cache_indices, num_v_heads,
                      head_v_dim, lower_bound=None, **kwargs):
        return self._record("packed_decode", kwargs)

    def decode(self, q, k, v, a, b, *, A_log, dt_bias, ssm_states, cache_indices, query_start_loc, lower_bound=None,
               **kwargs):
        return self._record("decode", kwargs)

    def target_verify(self, A_log, dt_bias, q, k, v, a, b, *, ssm_states, cache_indices, query_start_loc,
                      intermediate_states_buffer, intermediate_state_indices, cache_steps, retrieve_parent_token,
                      lower_bound=None, cache_ring=False, replayssm_rawv=None, replayssm_rawk=None, replayssm_g=None,
                      replayssm_beta=None, **kwargs):
        return self._record("target_verify", dict(kwargs, cache_ring=cache_ring, replayssm_rawv=replayssm_rawv))

    def extend(self, q, k, v, g, beta, *, ssm_states, cache_indices, query_start_loc, A_log=None, dt_bias=None,
               lower_bound=None, beta_is_raw=False, return_intermediate_states=False, **kwargs):
        return self._record("extend", dict(kwargs, return_intermediate_states=return_intermediate_states))


Kernel = sg.kernel_class(FakeTritonKDAKernel)


def _kernel(backend):
    kern = Kernel()
    kern.kimiops_backend = backend
    return kern


def _inputs(T, H, HV, K, V, slots, seed, device="cpu", dtype=torch.float32):
    """One batch as SGLang's KDA layer hands it over: ``qkv`` ``[T, 2HK + HV V]`` (the short
    convolution's output), raw gate ``a`` ``[T, HV * K]``, beta logits ``b`` ``[1, T, HV]``,
    ``A_log`` ``[1, 1, HV, 1]``, ``dt_bias`` ``[HV * K]`` (fp32) and a V-first fp32 pool."""
    gen = torch.Generator().manual_seed(seed)

    def rnd(*shape, s=1.0):
        return (torch.randn(*shape, generator=gen) * s).to(device)

    return dict(qkv=rnd(T, 2 * H * K + HV * V).to(dtype), a=rnd(T, HV * K).to(dtype), b=rnd(1, T, HV).to(dtype),
                A_log=rnd(1, 1, HV, 1), dt_bias=rnd(HV * K), pool=rnd(slots, HV, V, K, s=0.5))


def _split(x, H, HV, K, V):
    """q, k, v ``[1, T, heads, dim]`` as views of ``qkv``, as SGLang splits it."""
    q, k, v = x["qkv"].split([H * K, H * K, HV * V], dim=-1)
    return tuple(t.unflatten(-1, (-1, d)).unsqueeze(0) for t, d in ((q, K), (k, K), (v, V)))


def _oracle(x, H, HV, K, V, start, cu, scale, lower_bound=None, beta_is_logits=True, gate=True, parents=None):
    """fp64 outputs ``[T, HV, V]`` and per-token states ``[T, HV, V, K]`` of sequences ``cu``
    starting from ``pool[start]`` (zeros for -1)."""
    q, k, v = (t[0].double().cpu() for t in _split(x, H, HV, K, V))
    T = q.shape[0]
    a = x["a"].double().cpu().reshape(T, HV, K)
    g = kda_gate(a, x["A_log"].double().cpu().reshape(-1), x["dt_bias"].double().cpu(), lower_bound,
                 output_dtype=torch.float64) if gate else a
    beta = x["b"].double().cpu().reshape(T, HV)
    beta = torch.sigmoid(beta) if beta_is_logits else beta
    pool = x["pool"].double().cpu()
    h0 = torch.stack([pool[s] if s >= 0 else torch.zeros(HV, V, K, dtype=torch.float64) for s in start.tolist()])
    token_parents = None
    if parents is not None:
        bounds = cu.tolist()
        token_parents = torch.zeros(1, T, dtype=torch.int64)
        for n in range(len(bounds) - 1):
            token_parents[0, bounds[n]:bounds[n + 1]] = parents[n, :bounds[n + 1] - bounds[n]].cpu()
    o, _, after = naive_recurrent_kda(l2norm(q)[None], l2norm(k)[None], v[None], g[None], beta[None], scale=scale,
                                      initial_state=h0, output_final_state=True, cu_seqlens=cu.cpu(),
                                      state_v_first=True, token_states=True, token_parents=token_parents)
    return o[0], after[0]


@pytest.mark.parametrize("backend", ["torch", "triton"])
@pytest.mark.parametrize("lower_bound", [None, -5.0])
def test_packed_decode_matches_the_oracle(backend, lower_bound):
    """Four requests, one padded (-1): q, k, v are strided views of ``mixed_qkv``; the output of the
    padded request is zero, named slots hold the new states, the others keep their NaN poison."""
    H, HV, K, V, B = 1, 2, 16, 16, 4
    x = _inputs(B, H, HV, K, V, slots=6, seed=1)
    idx = torch.tensor([3, -1, 0, 5], dtype=torch.int32)
    x["pool"][[1, 2, 4]] = NAN
    pool = x["pool"].clone()
    kern = _kernel(backend)
    o = kern.packed_decode(x["qkv"], x["a"], x["b"], A_log=x["A_log"], dt_bias=x["dt_bias"], scale=0.3,
                           ssm_states=pool, cache_indices=idx, num_v_heads=HV, head_v_dim=V, lower_bound=lower_bound,
                           replayssm_d=None, replayssm_k=None, replayssm_g=None, replayssm_write_pos=None,
                           replayssm_force_flush=None)
    cu = torch.arange(B + 1, dtype=torch.int32)
    o_ref, after = _oracle(x, H, HV, K, V, idx, cu, 0.3, lower_bound)
    assert o.shape == (1, B, HV, V)
    live = idx >= 0
    assert torch.equal(o[0, 1], torch.zeros(HV, V))
    assert rel_err(o[0, live], o_ref[live]) < 1e-5
    assert rel_err(pool[idx[live].long()], after[live]) < 1e-5
    assert torch.isnan(pool[[1, 2, 4]]).all()
    assert kern.calls == {("packed_decode", "kimiops"): 1} and not kern.handed


@pytest.mark.parametrize("backend", ["torch", "triton"])
def test_decode_matches_the_oracle(backend):
    """``decode`` as SGLang calls it: q, k, v views of the convolution output, raw gate
    ``[T, HV * K]``, ``query_start_loc`` one token per request, GVA."""
    H, HV, K, V, B = 1, 2, 16, 16, 3
    x = _inputs(B, H, HV, K, V, slots=4, seed=2)
    idx = torch.tensor([2, 0, -1], dtype=torch.int32)
    cu = torch.arange(B + 1, dtype=torch.int32)
    pool = x["pool"].clone()
    q, k, v = _split(x, H, HV, K, V)
    o = _kernel(backend).decode(q, k, v, x["a"], x["b"], A_log=x["A_log"], dt_bias=x["dt_bias"], ssm_states=pool,
                                cache_indices=idx, query_start_loc=cu, lower_bound=None)
    o_ref, after = _oracle(x, H, HV, K, V, idx, cu, K**-0.5)
    assert rel_err(o[0, :2], o_ref[:2]) < 1e-5 and torch.equal(o[0, 2], torch.zeros(HV, V))
    assert rel_err(pool[[2, 0]], after[:2]) < 1e-5
    assert torch.equal(pool[[1, 3]], x["pool"][[1, 3]])


def test_decode_takes_padded_gates_transposed_views_and_strided_indices():
    """Gate and beta rows past q's (CUDA-graph padding), q, k, v whose last dimension is strided
    (a transposed convolution output) and a strided index view: the result of the plain call."""
    H, HV, K, V, B = 1, 2, 16, 16, 3
    x = _inputs(B, H, HV, K, V, slots=4, seed=3)
    idx = torch.tensor([2, 0, -1], dtype=torch.int32)
    cu = torch.arange(B + 1, dtype=torch.int32)
    q, k, v = _split(x, H, HV, K, V)
    kern = _kernel("torch")
    plain = x["pool"].clone()
    want = kern.decode(q, k, v, x["a"], x["b"], A_log=x["A_log"], dt_bias=x["dt_bias"], ssm_states=plain,
                       cache_indices=idx, query_start_loc=cu)
    a_pad = torch.cat([x["a"], torch.full((2, HV * K), float("nan"))])
    b_pad = torch.cat([x["b"], torch.full((1, 2, HV), float("nan"))], 1)
    q_t, k_t, v_t = (t.transpose(1, 3).contiguous().transpose(1, 3) for t in (q, k, v))  # [dim, T] storage
    assert q_t.stride(-1) != 1
    table = torch.stack([idx, torch.zeros_like(idx)], 1)
    pool = x["pool"].clone()
    got = kern.decode(q_t, k_t, v_t, a_pad, b_pad, A_log=x["A_log"], dt_bias=x["dt_bias"], ssm_states=pool,
                      cache_indices=table[:, 0], query_start_loc=cu)
    assert torch.equal(got, want) and torch.equal(pool, plain)


@pytest.mark.parametrize("backend", ["torch", "triton"])
@pytest.mark.parametrize("beta_is_raw", [True, False])
def test_extend_matches_the_oracle(backend, beta_is_raw):
    """Prefill of 3 requests (20, 0 and 37 tokens; the empty one padded) from their pool slots:
    ``beta_is_raw=True`` takes logits, ``False`` the sigmoid as the model computed it."""
    H, HV, K, V = 1, 2, 16, 16
    lengths = [20, 0, 37]
    T = sum(lengths)
    x = _inputs(T, H, HV, K, V, slots=4, seed=3)
    if not beta_is_raw:
        x["b"] = torch.sigmoid(x["b"])
    idx = torch.tensor([1, -1, 3], dtype=torch.int32)
    cu = torch.tensor([0] + lengths).cumsum(0).to(torch.int32)
    pool = x["pool"].clone()
    q, k, v = _split(x, H, HV, K, V)
    g = x["a"].reshape(1, T, HV, K)
    o = _kernel(backend).extend(q, k, v, g, x["b"], ssm_states=pool, cache_indices=idx, query_start_loc=cu,
                                A_log=x["A_log"], dt_bias=x["dt_bias"], lower_bound=None, beta_is_raw=beta_is_raw,
                                extend_seq_lens_cpu=lengths, layer_id=7, is_spec_decode=False,
                                return_intermediate_states=False, track_state=None, track_chunk_idx=None)
    o_ref, after = _oracle(x, H, HV, K, V, idx, cu, K**-0.5, beta_is_logits=beta_is_raw)
    assert o.shape == (1, T, HV, V)
    assert rel_err(o[0], o_ref) < CHUNK_TOL[backend]
    assert rel_err(pool[[1, 3]], after[[19, T - 1]]) < CHUNK_TOL[backend]
    assert torch.equal(pool[[0, 2]], x["pool"][[0, 2]])


def test_extend_without_a_log_takes_g_as_the_log_decay():
    """SGLang applies no gate when ``A_log`` is None (``lower_bound`` is then unused)."""
    H, HV, K, V, T = 1, 1, 16, 16, 9
    x = _inputs(T, H, HV, K, V, slots=2, seed=4)
    x["a"] = -torch.rand(T, HV * K)
    cu = torch.tensor([0, T], dtype=torch.int32)
    idx = torch.tensor([1], dtype=torch.int32)
    pool = x["pool"].clone()
    q, k, v = _split(x, H, HV, K, V)
    o = _kernel("torch").extend(q, k, v, x["a"].reshape(1, T, HV, K), x["b"], ssm_states=pool, cache_indices=idx,
                                query_start_loc=cu, A_log=None, dt_bias=x["dt_bias"], lower_bound=-5.0,
                                beta_is_raw=True)
    o_ref, after = _oracle(x, H, HV, K, V, idx, cu, K**-0.5, gate=False)
    assert rel_err(o[0], o_ref) < 1e-5 and rel_err(pool[1], after[-1]) < 1e-5


@pytest.mark.parametrize("backend", ["torch", "triton"])
def test_extend_snapshots_for_the_prefix_cache(backend):
    """SGLang's track path: ``return_intermediate_states=True`` with an fp32 snapshot buffer returns
    ``(o, None)`` (it reads the snapshot, not ``h``); row n holds the state after 64 * idx[n] tokens."""
    H, HV, K, V = 1, 1, 16, 16
    lengths = [70, 130]
    T = sum(lengths)
    x = _inputs(T, H, HV, K, V, slots=3, seed=5)
    idx = torch.tensor([0, 2], dtype=torch.int32)
    cu = torch.tensor([0] + lengths).cumsum(0).to(torch.int32)
    track = torch.full((2, HV, V, K), NAN)
    q, k, v = _split(x, H, HV, K, V)
    o, h = _kernel(backend).extend(
        q, k, v, x["a"].reshape(1, T, HV, K), x["b"], ssm_states=x["pool"].clone(), cache_indices=idx,
        query_start_loc=cu, A_log=x["A_log"], dt_bias=x["dt_bias"], lower_bound=None, beta_is_raw=True,
        return_intermediate_states=True, track_ssm_h_src=torch.tensor([0]), track_state=track,
        track_chunk_idx=torch.tensor([1, 2], dtype=torch.int32))
    assert h is None and o.shape == (1, T, HV, V)
    _, after = _oracle(x, H, HV, K, V, idx, cu, K**-0.5)
    assert rel_err(track[0], after[63]) < CHUNK_TOL[backend]
    assert rel_err(track[1], after[70 + 127]) < CHUNK_TOL[backend]


@pytest.mark.parametrize("backend", ["torch", "triton"])
def test_target_verify_matches_the_oracle(backend):
    """Three requests of 3 draft tokens (cache_steps 3): the second padded, the third a tree; the
    tables are longer than the batch (SGLang sizes them by the pool) and both padded entries point
    at one discard row, as SGLang's do. The pool keeps its bits."""
    H, HV, K, V, S = 1, 2, 16, 16, 3
    N, T = 3, 9
    x = _inputs(T, H, HV, K, V, slots=5, seed=6)
    start = torch.tensor([4, -1, 1, -1, -1], dtype=torch.int32)
    rows = torch.tensor([0, 3, 2, 3, 3], dtype=torch.int32)
    parents = torch.tensor([[-1, 0, 1], [-1, 0, 1], [-1, 0, 0], [-1, 0, 1], [-1, 0, 1]], dtype=torch.int32)
    cu = torch.tensor([0, 3, 6, 9], dtype=torch.int32)
    buf = torch.full((4, S, HV, V, K), NAN)
    pool = x["pool"].clone()
    q, k, v = _split(x, H, HV, K, V)
    o = _kernel(backend).target_verify(x["A_log"], x["dt_bias"], q, k, v, x["a"], x["b"], ssm_states=pool,
                                       cache_indices=start, query_start_loc=cu, intermediate_states_buffer=buf,
                                       intermediate_state_indices=rows, cache_steps=S, retrieve_parent_token=parents,
                                       lower_bound=None, cache_ring=False, replayssm_rawv=None)
    assert torch.equal(pool, x["pool"])
    o_ref, after = _oracle(x, H, HV, K, V, start[:N], cu, K**-0.5, parents=parents[:N])
    assert rel_err(o[0, [0, 1, 2, 6, 7, 8]], o_ref[[0, 1, 2, 6, 7, 8]]) < 1e-5
    assert torch.equal(o[0, 3:6], torch.zeros(3, HV, V))
    assert rel_err(buf[0], after[0:3]) < 1e-5 and rel_err(buf[2], after[6:9]) < 1e-5
    assert torch.isnan(buf[[1, 3]]).all()


def _verify_call(kern, **over):
    H, HV, K, V, S = 1, 1, 16, 16, 2
    x = _inputs(4, H, HV, K, V, slots=3, seed=7)
    q, k, v = _split(x, H, HV, K, V)
    kw = dict(ssm_states=x["pool"], cache_indices=torch.tensor([0, 1], dtype=torch.int32),
              query_start_loc=torch.tensor([0, 2, 4], dtype=torch.int32),
              intermediate_states_buffer=torch.zeros(2, S, HV, V, K),
              intermediate_state_indices=torch.tensor([0, 1], dtype=torch.int32), cache_steps=S,
              retrieve_parent_token=None, lower_bound=None)
    kw.update(over)
    return kern.target_verify(x["A_log"], x["dt_bias"], q, k, v, x["a"], x["b"], **kw)


def _decode_call(kern, method="packed_decode", **over):
    H, HV, K, V = 1, 1, 16, 16
    x = _inputs(2, H, HV, K, V, slots=3, seed=8)
    idx = torch.tensor([0, 2], dtype=torch.int32)
    if method == "packed_decode":
        return kern.packed_decode(x["qkv"], x["a"], x["b"], A_log=x["A_log"], dt_bias=x["dt_bias"], scale=0.25,
                                  ssm_states=x["pool"], cache_indices=idx, num_v_heads=HV, head_v_dim=V, **over)
    q, k, v = _split(x, H, HV, K, V)
    return kern.decode(q, k, v, x["a"], x["b"], A_log=x["A_log"], dt_bias=x["dt_bias"], ssm_states=x["pool"],
                       cache_indices=idx, query_start_loc=torch.arange(3, dtype=torch.int32), **over)


def _extend_call(kern, **over):
    H, HV, K, V, T = 1, 1, 16, 16, 5
    x = _inputs(T, H, HV, K, V, slots=2, seed=9)
    q, k, v = _split(x, H, HV, K, V)
    return kern.extend(q, k, v, x["a"].reshape(1, T, HV, K), x["b"], ssm_states=x["pool"],
                       cache_indices=torch.tensor([1], dtype=torch.int32),
                       query_start_loc=torch.tensor([0, T], dtype=torch.int32), A_log=x["A_log"],
                       dt_bias=x["dt_bias"], beta_is_raw=True, **over)


@pytest.mark.parametrize("call,over,route", [
    (_decode_call, dict(replayssm_d=torch.zeros(1), replayssm_k=torch.zeros(1), replayssm_g=torch.zeros(1),
                        replayssm_write_pos=torch.zeros(1)), "sglang:keyword replayssm_d"),
    (lambda kern, **o: _decode_call(kern, "decode", **o), dict(future_option=3), "sglang:keyword future_option"),
    (_verify_call, dict(cache_ring=True), "sglang:keyword cache_ring"),
    (_verify_call, dict(fused_accept_state_indices=torch.zeros(2, dtype=torch.int32)),
     "sglang:keyword fused_accept_state_indices"),
    (_verify_call, dict(intermediate_states_buffer=torch.zeros(2, 4, 1, 16, 16)), "sglang:buffer steps != cache_steps"),
    (_verify_call, dict(intermediate_states_buffer=None), "sglang:no verify buffer"),
    (_extend_call, dict(return_intermediate_states=True), "sglang:per-chunk states h"),
    (_extend_call, dict(return_intermediate_states=True, track_ssm_h_src=torch.tensor([3])),
     "sglang:per-chunk states h"),
])
def test_calls_kimiops_does_not_serve_go_to_sglang(call, over, route):
    kern = _kernel("torch")
    assert call(kern, **over)[0] == "sglang"
    method = kern.handed[0][0]
    assert kern.calls == {(method, route): 1}


def test_calls_with_only_bookkeeping_keywords_stay_on_kimiops():
    kern = _kernel("torch")
    _decode_call(kern, replayssm_d=None, replayssm_force_flush=None)
    _decode_call(kern, "decode", lower_bound=None)
    _verify_call(kern, cache_ring=False, replayssm_rawv=None, fused_accept_state_indices=None)
    _extend_call(kern, extend_seq_lens_cpu=[5], layer_id=0, chunk_indices=torch.zeros(1), chunk_offsets=None,
                 state_checkpoint_indices=None, is_spec_decode=True)
    o, h = _extend_call(kern, return_intermediate_states=True, track_ssm_h_src=torch.zeros(0, dtype=torch.int64))
    assert h is None and o.shape == (1, 5, 1, 16)
    assert not kern.handed
    assert set(kern.calls) == {(m, "kimiops") for m in ("packed_decode", "decode", "target_verify", "extend")}


def test_gpus_without_kimiops_kernels_go_to_sglang(monkeypatch):
    monkeypatch.setattr(engine, "device_family", lambda device: "rocm")
    assert not engine.serves(torch.device("cuda", 0))
    assert engine.serves(torch.device("cpu"))
    kern = _kernel("torch")
    monkeypatch.setattr(engine, "serves", lambda device: False)  # device_family: "rocm" above, named in the route
    assert _decode_call(kern)[0] == "sglang"
    assert kern.calls == {("packed_decode", "sglang:device family rocm"): 1}


def _declaring(**flags):
    """kimiops' kernel over a stand-in SGLang kernel class that declares ``flags``."""
    return sg.kernel_class(type("DeclaringKernel", (FakeTritonKDAKernel,), flags))()


@pytest.mark.parametrize("gpu_served", [True, False])
def test_the_kernel_declares_what_kimiops_does_on_its_gpu_else_what_sglang_declares(gpu_served, monkeypatch):
    monkeypatch.setattr(sg, "serves_current_gpu", lambda: gpu_served)
    sglang_flags = dict(supports_packed_decode=False, supports_track_state_snapshot=False,
                        supports_bounded_gate_decode=False)
    kern = _declaring(**sglang_flags)
    assert {f: getattr(kern, f) for f in sg.CAPABILITIES} == {f: gpu_served for f in sg.CAPABILITIES}
    # a class of SGLang's that sets none of them (before the flags) is taken as CAPABILITIES says
    bare = sg.kernel_class(type("Bare", (), {}))()
    assert {f: getattr(bare, f) for f in sg.CAPABILITIES} == {f: gpu_served or d for f, d in sg.CAPABILITIES.items()}
    assert not hasattr(sg.KDAKernelMethods, "supports_packed_decode")  # nothing declared on the class itself


def test_hand_backs_that_would_drop_what_the_kernel_declared_raise(monkeypatch):
    """A call kimiops hands to SGLang's kernel (here for an unknown keyword) that asks for what
    kimiops declared and SGLang's kernel does not (the snapshot, a bounded gate, a packed decode)
    raises instead of running without it; where SGLang's kernel declares it, the call is handed back."""
    monkeypatch.setattr(sg, "serves_current_gpu", lambda: True)
    snapshot = dict(track_state=torch.zeros(1, 1, 16, 16), track_chunk_idx=torch.zeros(1, dtype=torch.int64))
    none = dict(supports_packed_decode=False, supports_track_state_snapshot=False, supports_bounded_gate_decode=False)
    packed = dict(none, supports_packed_decode=True)
    for call, over, flag, declared in [
        (_extend_call, dict(snapshot), "supports_track_state_snapshot", none),
        (lambda kern, **o: _decode_call(kern, "decode", **o), dict(lower_bound=-5.0), "supports_bounded_gate_decode",
         none),
        (_decode_call, dict(lower_bound=-5.0), "supports_bounded_gate_decode", packed),
        (_decode_call, {}, "supports_packed_decode", none),
    ]:
        kern = _declaring(**declared)
        with pytest.raises(NotImplementedError, match=f"SGLang's own kernel \\(keyword future_option\\).*{flag}"):
            call(kern, future_option=1, **over)
        kern = _declaring(**dict(declared, **{flag: True}))
        assert call(kern, future_option=1, **over)[0] == "sglang"
        assert all(kern.handed[0][1][name] is value for name, value in over.items() if name.startswith("track"))
    kern = _declaring(**none)  # nothing asked for that SGLang's kernel lacks: handed back
    assert _extend_call(kern, future_option=1)[0] == "sglang"


def test_serves_current_gpu_asks_the_family_of_the_current_device(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 3)
    families = {3: "sm90"}
    monkeypatch.setattr(engine, "device_family", lambda device: families[device.index])
    assert engine.serves_current_gpu()
    families[3] = "rocm"
    assert not engine.serves_current_gpu()
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    families[3] = "sm90"
    assert not engine.serves_current_gpu()


def test_packed_decode_rejects_a_mixed_qkv_of_the_wrong_width():
    x = _inputs(2, 1, 1, 16, 16, slots=2, seed=10)
    with pytest.raises(ValueError, match=r"mixed_qkv: expected \[B, 2 \* H \* 16 \+ 1 \* 16\]"):
        _kernel("torch").packed_decode(x["qkv"][:, 1:], x["a"], x["b"], A_log=x["A_log"], dt_bias=x["dt_bias"],
                                       scale=0.25, ssm_states=x["pool"], cache_indices=torch.tensor([0, 1]),
                                       num_v_heads=1, head_v_dim=16)


def test_packed_decode_rejects_a_mixed_qkv_of_the_wrong_rank():
    x = _inputs(2, 1, 1, 16, 16, slots=2, seed=10)
    with pytest.raises(ValueError, match="mixed_qkv: expected 2 dimensions"):
        _kernel("torch").packed_decode(x["qkv"][None], x["a"], x["b"], A_log=x["A_log"], dt_bias=x["dt_bias"],
                                       scale=0.25, ssm_states=x["pool"], cache_indices=torch.tensor([0, 1]),
                                       num_v_heads=1, head_v_dim=16)


def test_kernel_class_needs_a_class():
    with pytest.raises(TypeError, match="base: expected SGLang's kernel class"):
        sg.kernel_class(FakeTritonKDAKernel())


@pytest.fixture
def stub_sglang(monkeypatch):
    """A stand-in for SGLang's dispatcher module holding ``TritonKDAKernel``."""
    module = types.ModuleType(sg.DISPATCHER_MODULE)
    module.TritonKDAKernel = FakeTritonKDAKernel
    monkeypatch.setitem(sys.modules, sg.DISPATCHER_MODULE, module)
    return module


def test_enable_swaps_the_dispatchers_kernel_class_and_disable_restores_it(stub_sglang):
    assert not sg.is_enabled()
    cls = sg.enable()
    assert stub_sglang.TritonKDAKernel is cls and issubclass(cls, FakeTritonKDAKernel)
    assert isinstance(cls(), FakeTritonKDAKernel)  # SGLang's isinstance checks see its Triton kernel
    assert sg.enable() is cls and sg.is_enabled()  # idempotent
    sg.disable()
    assert stub_sglang.TritonKDAKernel is FakeTritonKDAKernel and not sg.is_enabled()


def test_the_plugin_acts_only_when_asked(stub_sglang, monkeypatch):
    monkeypatch.delenv(sg.ENV_SWITCH, raising=False)
    assert sg.plugin() is None and stub_sglang.TritonKDAKernel is FakeTritonKDAKernel
    monkeypatch.setenv(sg.ENV_SWITCH, "0")
    assert sg.plugin() is None and not sg.is_enabled()
    monkeypatch.setenv(sg.ENV_SWITCH, "1")
    assert sg.plugin() is stub_sglang.TritonKDAKernel and sg.is_enabled()


def test_the_plugin_is_registered_for_sglang():
    names = {ep.name: ep.value for ep in entry_points(group="sglang.srt.plugins")}
    assert names.get("kimiops") == "kimiops.integrations.sglang:plugin"


def test_enable_without_sglang_says_what_is_missing(monkeypatch):
    monkeypatch.setitem(sys.modules, sg.DISPATCHER_MODULE, None)  # import of it raises ImportError
    with pytest.raises(ImportError, match=sg.DISPATCHER_MODULE):
        sg.enable()
    assert not sg.is_enabled()


# ---------------------------------------------------------------------------------------- GPU


def _gpu_inputs(T, seed, H=32, HV=32, K=128, V=128, slots=80):
    return _inputs(T, H, HV, K, V, slots, seed, device="cuda", dtype=torch.bfloat16)


def _bits_of_torch_path(run, x):
    """Run the call on the kernels and on the torch path (same inputs, own pool copies)."""
    outs = []
    for backend in ("triton", "torch"):
        pool = x["pool"].clone()
        outs.append((run(_kernel(backend), pool), pool))
    return outs


@gpu
def test_gpu_calls_match_the_torch_path():
    """bf16 at 32 heads: packed decode (N = 8, one padded), decode, verify (4 draft tokens) and
    extend (3 requests) on the kernels against the torch path from the same pool."""
    H, HV, K, V = 32, 32, 128, 128
    x = _gpu_inputs(8, seed=11)
    idx = torch.tensor([5, 9, -1, 0, 77, 3, 41, 12], dtype=torch.int32, device="cuda")
    packed = _bits_of_torch_path(lambda kern, pool: kern.packed_decode(
        x["qkv"], x["a"], x["b"], A_log=x["A_log"], dt_bias=x["dt_bias"], scale=K**-0.5, ssm_states=pool,
        cache_indices=idx, num_v_heads=HV, head_v_dim=V), x)
    q, k, v = _split(x, H, HV, K, V)
    cu = torch.arange(9, dtype=torch.int32, device="cuda")
    decode = _bits_of_torch_path(lambda kern, pool: kern.decode(
        q, k, v, x["a"], x["b"], A_log=x["A_log"], dt_bias=x["dt_bias"], ssm_states=pool, cache_indices=idx,
        query_start_loc=cu), x)
    for (o, pool), (o_ref, pool_ref) in (packed, decode):
        assert rel_err(o, o_ref) < 1e-2 and rel_err(pool, pool_ref) < 1e-3
    assert torch.equal(packed[0][0], decode[0][0]) and torch.equal(packed[0][1], decode[0][1])

    xv = _gpu_inputs(16, seed=12)
    qv, kv_, vv = _split(xv, H, HV, K, V)
    cu4 = torch.arange(0, 17, 4, dtype=torch.int32, device="cuda")
    starts, rows = torch.tensor([3, -1, 7, 1], dtype=torch.int32, device="cuda"), torch.arange(
        4, dtype=torch.int32, device="cuda")
    verify = []
    for backend in ("triton", "torch"):
        buf = torch.zeros(4, 4, HV, V, K, device="cuda")
        o = _kernel(backend).target_verify(xv["A_log"], xv["dt_bias"], qv, kv_, vv, xv["a"], xv["b"],
                                           ssm_states=xv["pool"], cache_indices=starts, query_start_loc=cu4,
                                           intermediate_states_buffer=buf, intermediate_state_indices=rows,
                                           cache_steps=4, retrieve_parent_token=None)
        verify.append((o, buf))
    assert rel_err(verify[0][0], verify[1][0]) < 1e-2 and rel_err(verify[0][1], verify[1][1]) < 1e-3

    lengths = [300, 1, 700]
    xe = _gpu_inputs(sum(lengths), seed=13)
    qe, ke, ve = _split(xe, H, HV, K, V)
    cue = torch.tensor([0] + lengths, device="cuda").cumsum(0).to(torch.int32)
    ge = xe["a"].reshape(1, -1, HV, K)
    ext = _bits_of_torch_path(lambda kern, pool: kern.extend(
        qe, ke, ve, ge, xe["b"], ssm_states=pool, cache_indices=torch.tensor([4, 50, 6], dtype=torch.int32,
                                                                             device="cuda"),
        query_start_loc=cue, A_log=xe["A_log"], dt_bias=xe["dt_bias"], lower_bound=-5.0, beta_is_raw=True), xe)
    assert rel_err(ext[0][0], ext[1][0]) < 1e-2 and rel_err(ext[0][1], ext[1][1]) < 3e-3


@gpu
def test_gpu_packed_decode_replays_in_a_cuda_graph():
    """A padded batch of 8 captured once, replayed with new inputs and slots: the eager call's bits."""
    H, HV, K, V = 32, 32, 128, 128
    kern = _kernel(None)
    x = _gpu_inputs(8, seed=14)
    static = dict(qkv=x["qkv"].clone(), a=x["a"].clone(), b=x["b"].clone(),
                  idx=torch.tensor([1, 2, 3, -1, -1, -1, -1, -1], dtype=torch.int32, device="cuda"))
    pool = x["pool"].clone()

    def step(s, p):
        return kern.packed_decode(s["qkv"], s["a"], s["b"], A_log=x["A_log"], dt_bias=x["dt_bias"], scale=K**-0.5,
                                  ssm_states=p, cache_indices=s["idx"], num_v_heads=HV, head_v_dim=V)

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(2):
            step(static, pool.clone())
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        o_static = step(static, pool)
    fresh = _gpu_inputs(8, seed=15)
    new_idx = torch.tensor([60, 7, -1, 33, 2, -1, 71, 0], dtype=torch.int32, device="cuda")
    for name in ("qkv", "a", "b"):
        static[name].copy_(fresh[name])
    static["idx"].copy_(new_idx)
    before = pool.clone()
    graph.replay()
    pool_eager = before.clone()
    o_eager = step(dict(qkv=fresh["qkv"], a=fresh["a"], b=fresh["b"], idx=new_idx), pool_eager)
    torch.cuda.synchronize()
    assert torch.equal(o_static, o_eager) and torch.equal(pool, pool_eager)
    assert kern.calls[("packed_decode", "kimiops")] >= 4
