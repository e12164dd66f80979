"""vLLM's KDA prefill and decode on kimiops (kimiops/integrations/vllm.py).

vLLM itself is not installed here: a stand-in module takes the place of
``vllm.models.kimi_k3.nvidia.ops.third_party.kda`` with vLLM 0.33's three functions (their
signatures) that record what kimiops hands back. Inputs come as vLLM's Kimi-Linear layer passes
them: for prefill q, k, v as transposed views of the convolution's output, raw gate and beta logits,
``A_log`` ``[H]``, initial states gathered from the pool ``[N, H, V, K]``; for decode the packed
``mixed_qkv`` rows and the pool with vLLM's null block (slot 0) as padding. CPU: the torch path and
the Triton kernels in the interpreter (fp32) against the fp64 oracle (prefill) or against
``kimiops.fused_recurrent_kda`` called directly (decode); GPU (``gpu`` marker): bf16 at 32 heads.
"""

from __future__ import annotations

import sys
import types
from importlib.metadata import entry_points

import pytest
import torch

from kimiops.integrations import engine
from kimiops.integrations import vllm as vl
from kimiops.kda.gate import kda_gate, l2norm
from kimiops.kda.reference import naive_recurrent_kda
from kimiops.testing import rel_err

gpu = pytest.mark.gpu
# the chunk kernels take fp16 score operands and tf32 products (kimiops/kda/kernels/chunk_intra.py)
CHUNK_TOL = {"torch": 1e-5, "triton": 3e-3}


def _fake_vllm_prefill(q, k, v, raw_g, raw_beta, A_log, g_bias, scale=None, initial_state=None,
                       output_final_state=False, lower_bound=None, use_qk_l2norm_in_kernel=False, cu_seqlens=None,
                       out=None, **kwargs):
    """vLLM 0.33's ``chunk_kda_with_fused_gate`` signature; records the call."""
    _fake_vllm_prefill.handed.append(kwargs)
    return "vllm", None


def _fake_vllm_packed(mixed_qkv, raw_g, raw_beta, A_log, dt_bias, lower_bound, initial_state, state_indices,
                      scale=None, out=None, **kwargs):
    """vLLM 0.33's ``fused_recurrent_kda_packed_decode`` signature; records the call."""
    _fake_vllm_packed.handed.append(kwargs)
    return "vllm", None


def _fake_vllm_spec(q, k, v, raw_g, raw_beta, A_log, dt_bias, lower_bound, initial_state, cu_seqlens,
                    ssm_state_indices, num_accepted_tokens=None, out=None, fuse_gate=None, **kwargs):
    """vLLM 0.33's ``fused_recurrent_kda`` signature; records the call."""
    _fake_vllm_spec.handed.append(kwargs)
    return "vllm", None


FAKES = {vl.PREFILL_NAME: _fake_vllm_prefill, vl.PACKED_NAME: _fake_vllm_packed, vl.SPEC_NAME: _fake_vllm_spec}


@pytest.fixture
def stub_vllm(monkeypatch):
    """A stand-in for vLLM's KDA module holding vLLM's functions; kimiops' state reset around the test."""
    module = types.ModuleType(vl.KDA_MODULE)
    for name, fake in FAKES.items():
        setattr(module, name, fake)
        fake.handed = []
    monkeypatch.setitem(sys.modules, vl.KDA_MODULE, module)
    monkeypatch.setattr(vl, "_originals", {})
    monkeypatch.setattr(vl, "calls", type(vl.calls)())
    return module


def _inputs(lengths, H, HV, K, V, seed, device="cpu", dtype=torch.float32):
    """One prefill batch as vLLM's Kimi-Linear layer hands it over: q, k, v ``[1, T, heads, dim]``
    as transposed views of a ``[dim, T]`` convolution output, raw gate ``[1, T, HV, K]``, beta
    logits ``[1, T, HV]`` sliced out of a wider projection, ``A_log`` ``[HV]``, ``g_bias``
    ``[HV * K]``, initial states ``[N, HV, V, K]`` (the last request's zero: no initial state)."""
    gen = torch.Generator().manual_seed(seed)
    T, N = sum(lengths), len(lengths)

    def rnd(*shape, s=1.0):
        return (torch.randn(*shape, generator=gen) * s).to(device)

    conv = rnd(2 * H * K + HV * V, T).to(dtype)  # [dim, T], as the convolution writes it
    q, k, v = (x.unflatten(-1, (-1, d)).unsqueeze(0) for x, d in zip(conv.t().split([H * K, H * K, HV * V], -1),
                                                                      (K, K, V)))
    h0 = rnd(N, HV, V, K, s=0.5)
    h0[-1] = 0
    return dict(q=q, k=k, v=v, raw_g=rnd(1, T, HV, K).to(dtype), raw_beta=rnd(T, HV + 3)[:, :HV].unsqueeze(0).to(dtype),
                A_log=rnd(HV), g_bias=rnd(HV * K), h0=h0,
                cu=torch.tensor([0] + lengths).cumsum(0).to(torch.int32).to(device))


def _oracle(x, scale, lower_bound=None):
    """fp64 output ``[T, HV, V]`` and final states ``[N, HV, V, K]``."""
    q, k, v = (x[n][0].double().cpu() for n in ("q", "k", "v"))
    g = kda_gate(x["raw_g"][0].double().cpu(), x["A_log"].double().cpu(), x["g_bias"].double().cpu(), lower_bound,
                 output_dtype=torch.float64)
    beta = torch.sigmoid(x["raw_beta"][0].double().cpu())
    o, ht = naive_recurrent_kda(l2norm(q)[None], l2norm(k)[None], v[None], g[None], beta[None], scale=scale,
                                initial_state=x["h0"].double().cpu(), output_final_state=True,
                                cu_seqlens=x["cu"].cpu(), state_v_first=True)
    return o[0], ht


def _call(x, **kw):
    return vl.chunk_kda_with_fused_gate(x["q"], x["k"], x["v"], x["raw_g"], x["raw_beta"], x["A_log"], x["g_bias"],
                                        initial_state=x["h0"], output_final_state=True, use_qk_l2norm_in_kernel=True,
                                        cu_seqlens=x["cu"], **kw)


@pytest.mark.parametrize("backend", ["torch", "triton"])
@pytest.mark.parametrize("lower_bound", [None, -5.0])
def test_prefill_matches_the_oracle(backend, lower_bound, stub_vllm, monkeypatch):
    """Three requests (20, 0 and 37 tokens), GVA: the output, the final states, and v left as it was."""
    monkeypatch.setattr(vl, "kimiops_backend", backend)
    vl.enable()
    x = _inputs([20, 0, 37], H=1, HV=2, K=16, V=16, seed=1)
    v_before = x["v"].clone()
    o, ht = stub_vllm.chunk_kda_with_fused_gate(
        x["q"], x["k"], x["v"], x["raw_g"], x["raw_beta"], x["A_log"], x["g_bias"], initial_state=x["h0"],
        output_final_state=True, lower_bound=lower_bound, use_qk_l2norm_in_kernel=True, cu_seqlens=x["cu"])
    o_ref, ht_ref = _oracle(x, 16 ** -0.5, lower_bound)
    assert o.shape == (1, 57, 2, 16) and ht.shape == (3, 2, 16, 16)
    assert rel_err(o[0], o_ref) < CHUNK_TOL[backend]
    assert rel_err(ht, ht_ref) < CHUNK_TOL[backend]
    assert torch.equal(x["v"], v_before)
    assert vl.calls == {(vl.PREFILL_NAME, "kimiops"): 1} and not _fake_vllm_prefill.handed


def test_prefill_takes_padding_rows_and_checks_out_first(stub_vllm):
    """Token rows past ``cu_seqlens[-1]`` (padding, as the docstring allows) give the outputs and
    states of the call without them; an ``out`` of the wrong shape is refused before anything runs."""
    x = _inputs([7, 0, 5], H=1, HV=2, K=16, V=16, seed=21)
    # the padded inputs below are contiguous copies; the call without padding takes contiguous copies
    # too, since the torch path's reductions over a strided last dimension may round otherwise (on an
    # AMD EPYC CPU machine the transposed views gave other bits than their contiguous copies)
    x = dict(x, **{n: x[n].contiguous() for n in ("q", "k", "v", "raw_g", "raw_beta")})
    want_o, want_s = _call(x)
    padded = dict(x)
    for n in ("q", "k", "v", "raw_g", "raw_beta"):
        padded[n] = torch.cat([x[n], torch.zeros(1, 3, *x[n].shape[2:])], 1)
    got_o, got_s = _call(padded)
    assert got_o.shape[1] == 15 and torch.equal(got_o[:, :12], want_o) and torch.equal(got_s, want_s)
    with pytest.raises(ValueError, match="out: expected shape"):
        _call(x, out=torch.empty(1, 11, 2, 16))


def test_prefill_writes_out_and_takes_the_old_a_log_shape(stub_vllm):
    """``out`` receives the output and is returned; ``A_log`` ``[1, 1, HV, 1]`` and a given scale."""
    x = _inputs([9, 14], H=2, HV=2, K=16, V=16, seed=2)
    out = torch.full((1, 23, 2, 16), float("nan"))
    x["A_log"] = x["A_log"].view(1, 1, 2, 1)
    o, ht = _call(x, out=out, scale=0.2)
    o_ref, ht_ref = _oracle(dict(x, A_log=x["A_log"].reshape(-1)), 0.2)
    assert o is out
    assert rel_err(out[0], o_ref) < 1e-5 and rel_err(ht, ht_ref) < 1e-5


def test_unknown_keywords_with_values_go_to_vllm(stub_vllm):
    vl.enable()
    x = _inputs([5], H=1, HV=1, K=16, V=16, seed=3)
    order = torch.arange(1)
    assert _call(x, seq_order=order) == ("vllm", None)
    assert _fake_vllm_prefill.handed == [{"seq_order": order}]
    o, _ = _call(x, seq_order=None, chunk_indices=False)  # no value: kimiops
    assert o.shape == (1, 5, 1, 16)
    assert vl.calls == {(vl.PREFILL_NAME, "vllm:keyword seq_order"): 1, (vl.PREFILL_NAME, "kimiops"): 1}


def test_prefill_with_flas_chunk_tables_stays_on_kimiops(stub_vllm):
    """vLLM's model code may pass FLA's host-built chunk tables (derived from ``cu_seqlens``, which
    kimiops reads on the device): the call stays on kimiops with the bits of the call without them."""
    vl.enable()
    x = _inputs([40, 3], H=1, HV=1, K=16, V=16, seed=4)
    want_o, want_s = _call(x)
    # FLA's tables at its chunks of 64: (sequence, chunk) per chunk, chunks before each sequence
    tables = dict(chunk_indices=torch.tensor([[0, 0], [1, 0]], dtype=torch.int32),
                  chunk_offsets=torch.tensor([0, 1, 2], dtype=torch.int32))
    got_o, got_s = _call(x, **tables)
    assert torch.equal(got_o, want_o) and torch.equal(got_s, want_s)
    assert vl.calls == {(vl.PREFILL_NAME, "kimiops"): 2} and not _fake_vllm_prefill.handed


def test_head_dims_without_chunk_kernels_go_to_vllm_on_gpus(stub_vllm, monkeypatch):
    """On a GPU, head dims the chunk kernels are not built for would run kimiops' torch path: vLLM
    takes them (meta tensors stand in for a GPU's)."""
    vl.enable()
    monkeypatch.setattr(engine, "serves", lambda device: True)
    x = {n: (t.to("meta") if isinstance(t, torch.Tensor) else t) for n, t in
         _inputs([4], H=1, HV=1, K=48, V=16, seed=7).items()}
    assert _call(x) == ("vllm", None)
    assert vl.calls == {(vl.PREFILL_NAME, "vllm:head dims 48, 16"): 1}


def test_a_hand_off_without_vllms_function_says_so(stub_vllm):
    with pytest.raises(ValueError, match="keyword seq_order.*enable"):
        _call(_inputs([3], H=1, HV=1, K=16, V=16, seed=6), seq_order=torch.arange(1))


def test_gpus_without_kimiops_kernels_go_to_vllm(stub_vllm, monkeypatch):
    monkeypatch.setattr(engine, "device_family", lambda device: "rocm")
    assert not engine.serves(torch.device("cuda", 0))
    assert engine.serves(torch.device("cpu"))
    vl.enable()
    monkeypatch.setattr(engine, "serves", lambda device: False)
    assert _call(_inputs([4], H=1, HV=1, K=16, V=16, seed=4)) == ("vllm", None)
    assert vl.calls == {(vl.PREFILL_NAME, "vllm:device family rocm"): 1}


def _bits(t):
    return t.view({torch.float32: torch.int32, torch.bfloat16: torch.int16}[t.dtype])


def _decode_inputs(B, H, K, V, slots, seed, device="cpu", dtype=torch.float32, tokens=None):
    """A decode batch as vLLM's layer hands it over: ``mixed_qkv`` ``[T, 2 H K + H V]`` (T = B, or
    ``tokens`` for speculative decode), raw gate ``[1, T, H, K]``, beta logits ``[1, T, H]`` sliced
    out of a wider projection, ``A_log`` ``[H]``, ``dt_bias`` ``[H * K]``, and a pool whose slot 0
    (vLLM's null block) is NaN."""
    gen = torch.Generator().manual_seed(seed)
    T = B if tokens is None else tokens

    def rnd(*shape, s=1.0):
        return (torch.randn(*shape, generator=gen) * s).to(device)

    pool = rnd(slots, H, V, K, s=0.3)
    pool[0] = float("nan")
    return dict(mixed=rnd(T, 2 * H * K + H * V).to(dtype), raw_g=rnd(1, T, H, K).to(dtype),
                raw_beta=rnd(T, H + 2)[:, :H].unsqueeze(0).to(dtype), A_log=rnd(H), dt_bias=rnd(H * K), pool=pool)


def _split(x, H, K, V):
    """q, k, v ``[1, T, H, dim]`` (contiguous copies) of ``mixed_qkv``."""
    q, k, v = x["mixed"].split([H * K, H * K, H * V], 1)
    return tuple(t.unflatten(1, (H, -1)).unsqueeze(0).contiguous() for t in (q, k, v))


def _direct(x, H, K, V, indices, **kw):
    """kimiops.fused_recurrent_kda on separate q, k, v with -1 where vLLM pads with 0, on the
    adapter's backend: batch mode (``[B, 1, ...]``, one token per request) without ``cu_seqlens``
    in ``kw``."""
    import kimiops

    pool = x["pool"].clone()
    q, k, v, g, beta = (*_split(x, H, K, V), x["raw_g"], x["raw_beta"])
    if "cu_seqlens" not in kw:
        q, k, v, g, beta = (t.transpose(0, 1) for t in (q, k, v, g, beta))
    o, _ = kimiops.fused_recurrent_kda(
        q, k, v, g, beta, kw.pop("scale", None), pool, use_qk_l2norm_in_kernel=True,
        use_gate_in_kernel=True, use_beta_sigmoid_in_kernel=True, A_log=x["A_log"], dt_bias=x["dt_bias"],
        state_v_first=True, ssm_state_indices=torch.where(indices <= 0, -1, indices), backend=vl.kimiops_backend, **kw)
    return o, pool


@pytest.mark.parametrize("backend", ["torch", "triton"])
@pytest.mark.parametrize("lower_bound", [None, -5.0])
def test_packed_decode_is_the_direct_call_with_the_null_block_as_padding(backend, lower_bound, stub_vllm,
                                                                        monkeypatch):
    """Four requests, one on vLLM's null block and one on -1: the bits of the direct call with -1
    for both (zero rows, slot 0 still NaN), q, k, v read from their places in ``mixed_qkv``."""
    monkeypatch.setattr(vl, "kimiops_backend", backend)
    vl.enable()
    H, K, V = 2, 16, 32
    x = _decode_inputs(4, H, K, V, slots=7, seed=8)
    idx = torch.tensor([3, 0, 5, -1], dtype=torch.int32)
    pool = x["pool"].clone()
    o, ret = stub_vllm.fused_recurrent_kda_packed_decode(x["mixed"], x["raw_g"], x["raw_beta"], x["A_log"],
                                                         x["dt_bias"], lower_bound, pool, idx)
    ref_o, ref_pool = _direct(x, H, K, V, idx, lower_bound=lower_bound)
    assert ret is pool and o.shape == (1, 4, H, V)
    assert torch.equal(_bits(o[0]), _bits(ref_o[:, 0])) and torch.equal(_bits(pool), _bits(ref_pool))
    assert pool[0].isnan().all() and torch.equal(o[0, 1], torch.zeros(H, V))
    assert not torch.equal(pool[3], x["pool"][3])
    assert vl.calls == {(vl.PACKED_NAME, "kimiops"): 1} and not _fake_vllm_packed.handed


def test_decode_takes_strided_index_views(stub_vllm):
    """vLLM's own decode kernels take a stride for their slot indices (a column of its
    ``[N, T_max]`` table, say): the adapters pass such views on as contiguous copies."""
    H, K, V = 1, 16, 16
    x = _decode_inputs(3, H, K, V, slots=8, seed=13)
    table = torch.tensor([[5, 1], [2, 6], [7, 3]], dtype=torch.int32)
    runs = []
    for idx in (table[:, 0].contiguous(), table[:, 0]):
        pool = x["pool"].clone()
        o, _ = vl.fused_recurrent_kda_packed_decode(x["mixed"], x["raw_g"], x["raw_beta"], x["A_log"],
                                                    x["dt_bias"], None, pool, idx)
        runs.append((o, pool))
    assert torch.equal(_bits(runs[0][0]), _bits(runs[1][0])) and torch.equal(_bits(runs[0][1]), _bits(runs[1][1]))
    untouched = [1, 3, 4, 6]
    assert torch.equal(_bits(runs[1][1][untouched]), _bits(x["pool"][untouched]))
    q, k, v = _split(x, H, K, V)
    cu = torch.tensor([0, 1, 2, 3], dtype=torch.int32)
    wide = torch.tensor([[5, 0], [2, 0], [7, 0]], dtype=torch.int32)
    spec = []
    for idx, acc in ((wide[:, 0].contiguous(), None), (wide[:, 0], None),
                     (table, torch.tensor([[1, 0], [1, 0], [1, 0]], dtype=torch.int32)[:, 0])):
        pool = x["pool"].clone()
        o, _ = vl.fused_recurrent_kda(q, k, v, x["raw_g"], x["raw_beta"], x["A_log"], x["dt_bias"], None, pool, cu,
                                      idx, num_accepted_tokens=acc)
        spec.append((o, pool))
    assert torch.equal(_bits(spec[0][0]), _bits(spec[1][0])) and torch.equal(_bits(spec[0][1]), _bits(spec[1][1]))
    assert torch.equal(_bits(spec[2][0]), _bits(spec[0][0]))


def test_packed_decode_writes_out_with_a_given_scale(stub_vllm):
    H, K, V = 1, 16, 16
    x = _decode_inputs(2, H, K, V, slots=4, seed=9)
    idx = torch.tensor([2, 1], dtype=torch.int32)
    out = torch.full((1, 2, H, V), float("nan"))
    pool = x["pool"].clone()
    o, _ = vl.fused_recurrent_kda_packed_decode(x["mixed"], x["raw_g"], x["raw_beta"], x["A_log"], x["dt_bias"], None,
                                                pool, idx, scale=0.3, out=out)
    ref_o, _ = _direct(x, H, K, V, idx, scale=0.3)
    assert o is out and torch.equal(_bits(out[0]), _bits(ref_o[:, 0]))


def test_packed_decode_names_a_mixed_qkv_of_the_wrong_width(stub_vllm):
    x = _decode_inputs(2, 1, 16, 16, slots=4, seed=10)
    with pytest.raises(ValueError, match=r"mixed_qkv: expected \[B, 2\*H\*K \+ H\*V\] = \[B, 48\]"):
        vl.fused_recurrent_kda_packed_decode(x["mixed"][:, :40], x["raw_g"], x["raw_beta"], x["A_log"], x["dt_bias"],
                                             None, x["pool"], torch.tensor([1, 2], dtype=torch.int32))
    with pytest.raises(ValueError, match=r"raw_g: expected shape \[1, 2, 1, 16\], got \[2, 1, 16\]"):
        vl.fused_recurrent_kda_packed_decode(x["mixed"], x["raw_g"][0], x["raw_beta"], x["A_log"], x["dt_bias"],
                                             None, x["pool"], torch.tensor([1, 2], dtype=torch.int32))


@pytest.mark.parametrize("backend", ["torch", "triton"])
def test_speculative_decode_is_the_direct_call_with_the_null_block_as_padding(backend, stub_vllm, monkeypatch):
    """Three requests of 3, 2 and 4 draft tokens; the second starts on vLLM's null block (padding),
    the third keeps no state for a token on it; ``fuse_gate`` changes nothing; ``out`` is written."""
    monkeypatch.setattr(vl, "kimiops_backend", backend)
    vl.enable()
    H, K, V = 2, 16, 16
    x = _decode_inputs(3, H, K, V, slots=16, seed=11, tokens=9)
    cu = torch.tensor([0, 3, 5, 9], dtype=torch.int32)
    idx = torch.tensor([[4, 7, 2, 9], [0, 0, 0, 0], [5, 1, 0, 8]], dtype=torch.int32)
    acc = torch.tensor([1, 1, 2], dtype=torch.int32)
    q, k, v = _split(x, H, K, V)
    out = torch.full((1, 9, H, V), float("nan"))
    pool = x["pool"].clone()
    o, ret = stub_vllm.fused_recurrent_kda(q, k, v, x["raw_g"], x["raw_beta"], x["A_log"], x["dt_bias"], None, pool,
                                           cu, idx, num_accepted_tokens=acc, out=out, fuse_gate=True)
    ref_o, ref_pool = _direct(x, H, K, V, idx, cu_seqlens=cu, num_accepted_tokens=acc)
    assert o is out and ret is pool
    assert torch.equal(_bits(o), _bits(ref_o)) and torch.equal(_bits(pool), _bits(ref_pool))
    assert pool[0].isnan().all() and torch.equal(o[0, 3:5], torch.zeros(2, H, V))
    assert vl.calls == {(vl.SPEC_NAME, "kimiops"): 1} and not _fake_vllm_spec.handed


def test_decode_keywords_with_values_go_to_vllm(stub_vllm):
    vl.enable()
    x = _decode_inputs(1, 1, 16, 16, slots=3, seed=12)
    idx = torch.tensor([1], dtype=torch.int32)
    args = (x["mixed"], x["raw_g"], x["raw_beta"], x["A_log"], x["dt_bias"], None, x["pool"], idx)
    assert stub_vllm.fused_recurrent_kda_packed_decode(*args, cache_hint=1) == ("vllm", None)
    q, k, v = _split(x, 1, 16, 16)
    cu = torch.tensor([0, 1], dtype=torch.int32)
    spec_args = (q, k, v, x["raw_g"], x["raw_beta"], x["A_log"], x["dt_bias"], None, x["pool"], cu, idx[:, None])
    assert stub_vllm.fused_recurrent_kda(*spec_args, cache_hint=1) == ("vllm", None)
    assert _fake_vllm_packed.handed == [{"cache_hint": 1}] and _fake_vllm_spec.handed == [{"cache_hint": 1}]
    assert vl.calls == {(vl.PACKED_NAME, "vllm:keyword cache_hint"): 1, (vl.SPEC_NAME, "vllm:keyword cache_hint"): 1}


def test_enable_swaps_the_three_functions_and_disable_restores_them(stub_vllm):
    assert not vl.is_enabled()
    vl.enable()
    vl.enable()  # idempotent: vLLM's functions stay the ones saved
    assert vl.is_enabled()
    for name, fake in FAKES.items():
        assert getattr(stub_vllm, name) is getattr(vl, name) and vl._originals[name] is fake
    vl.disable()
    assert not vl.is_enabled()
    for name, fake in FAKES.items():
        assert getattr(stub_vllm, name) is fake


def test_the_plugin_acts_only_when_asked(stub_vllm, monkeypatch):
    monkeypatch.delenv(vl.ENV_SWITCH, raising=False)
    vl.plugin()
    assert stub_vllm.chunk_kda_with_fused_gate is _fake_vllm_prefill
    monkeypatch.setenv(vl.ENV_SWITCH, "0")
    vl.plugin()
    assert not vl.is_enabled()
    monkeypatch.setenv(vl.ENV_SWITCH, "1")
    vl.plugin()
    assert vl.is_enabled()


def test_the_plugin_patches_the_module_when_vllm_imports_it(tmp_path, monkeypatch):
    """Without the module imported yet, the plugin leaves an import hook: importing vLLM's KDA module
    later (here a stand-in package on sys.path) patches it; ``disable`` restores it and removes the hook."""
    pkg = tmp_path.joinpath(*vl.KDA_MODULE.split("."))
    pkg.mkdir(parents=True)
    for parent in [tmp_path.joinpath(*vl.KDA_MODULE.split(".")[:i]) for i in range(1, len(vl.KDA_MODULE.split(".")))]:
        (parent / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("".join(f"def {name}(*args, **kwargs):\n    return 'vllm'\n" for name in FAKES))
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in [m for m in sys.modules if m == "vllm" or m.startswith("vllm.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setattr(vl, "_originals", {})
    monkeypatch.setattr(sys, "meta_path", list(sys.meta_path))
    monkeypatch.setenv(vl.ENV_SWITCH, "1")
    vl.plugin()
    vl.plugin()  # one hook only
    assert sum(isinstance(f, vl._PatchOnImport) for f in sys.meta_path) == 1
    assert vl.KDA_MODULE not in sys.modules and not vl.is_enabled()
    import importlib

    module = importlib.import_module(vl.KDA_MODULE)
    try:
        assert module.chunk_kda_with_fused_gate is vl.chunk_kda_with_fused_gate and vl.is_enabled()
        assert vl._originals[vl.PREFILL_NAME](None) == "vllm"
        vl.disable()
        assert module.chunk_kda_with_fused_gate(None) == "vllm" and not vl.is_enabled()
        assert not any(isinstance(f, vl._PatchOnImport) for f in sys.meta_path)
    finally:
        for name in [m for m in sys.modules if m == "vllm" or m.startswith("vllm.")]:
            del sys.modules[name]


def test_the_plugin_warns_where_vllm_has_no_kda_module(tmp_path, monkeypatch):
    """A vLLM without Kimi-K3's KDA module (a stand-in ``vllm`` package with other models): the
    plugin warns that nothing will run on kimiops (its import hook stays, for a module its folder
    check could not see); nothing is imported below ``vllm``."""
    (tmp_path / "vllm" / "models" / "kimi_linear").mkdir(parents=True)
    for folder in ("vllm", "vllm/models", "vllm/models/kimi_linear"):
        (tmp_path / folder / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in [m for m in sys.modules if m == "vllm" or m.startswith("vllm.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setattr(sys, "meta_path", list(sys.meta_path))
    monkeypatch.setenv(vl.ENV_SWITCH, "1")
    with pytest.warns(RuntimeWarning, match=f"hold no {vl.KDA_MODULE}.*nothing is patched"):
        vl.plugin()
    assert sum(isinstance(f, vl._PatchOnImport) for f in sys.meta_path) == 1
    assert not [m for m in sys.modules if m.startswith("vllm.")]
    monkeypatch.delitem(sys.modules, "vllm", raising=False)


def test_the_plugins_folder_check_takes_a_vllm_module_without_a_spec(monkeypatch):
    monkeypatch.setitem(sys.modules, "vllm", types.ModuleType("vllm"))  # __spec__ None
    assert vl._kda_module_source() is None


@pytest.mark.parametrize("layout", ["package", "file"])
def test_the_plugin_finds_the_kda_module_as_a_package_or_a_file(layout, tmp_path, monkeypatch):
    parts = vl.KDA_MODULE.split(".")
    for i in range(1, len(parts)):
        tmp_path.joinpath(*parts[:i]).mkdir(exist_ok=True)
        tmp_path.joinpath(*parts[:i], "__init__.py").write_text("")
    if layout == "package":
        tmp_path.joinpath(*parts).mkdir()
        tmp_path.joinpath(*parts, "__init__.py").write_text("")
    else:
        tmp_path.joinpath(*parts[:-1], parts[-1] + ".py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in [m for m in sys.modules if m == "vllm" or m.startswith("vllm.")]:
        monkeypatch.delitem(sys.modules, name)
    assert vl._kda_module_source() is not None
    monkeypatch.delitem(sys.modules, "vllm", raising=False)


def test_the_plugin_is_registered_for_vllm():
    names = {ep.name: ep.value for ep in entry_points(group="vllm.general_plugins")}
    assert names.get("kimiops") == "kimiops.integrations.vllm:plugin"


def test_enable_without_vllm_says_what_is_missing(monkeypatch):
    monkeypatch.setitem(sys.modules, vl.KDA_MODULE, None)  # import of it raises ImportError
    with pytest.raises(ImportError, match="vllm.models.kimi_k3.nvidia.ops.third_party.kda"):
        vl.enable()
    monkeypatch.delitem(sys.modules, vl.KDA_MODULE)
    assert not vl.is_enabled()


def test_a_vllm_without_the_three_functions_is_refused(monkeypatch):
    module = types.ModuleType(vl.KDA_MODULE)
    module.chunk_kda_with_fused_gate = _fake_vllm_prefill
    monkeypatch.setitem(sys.modules, vl.KDA_MODULE, module)
    monkeypatch.setattr(vl, "_originals", {})
    with pytest.raises(ImportError, match="has no fused_recurrent_kda_packed_decode, fused_recurrent_kda"):
        vl.enable()
    assert module.chunk_kda_with_fused_gate is _fake_vllm_prefill  # nothing patched


@gpu
def test_gpu_prefill_matches_the_oracle(stub_vllm):
    """bf16 at 32 heads, K = V = 128, four requests of mixed length."""
    vl.enable()
    x = _inputs([300, 1, 64, 513], H=32, HV=32, K=128, V=128, seed=5, device="cuda", dtype=torch.bfloat16)
    o, ht = stub_vllm.chunk_kda_with_fused_gate(
        x["q"], x["k"], x["v"], x["raw_g"], x["raw_beta"], x["A_log"], x["g_bias"], initial_state=x["h0"],
        output_final_state=True, use_qk_l2norm_in_kernel=True, cu_seqlens=x["cu"])
    o_ref, ht_ref = _oracle(x, 128 ** -0.5)
    assert o.dtype == torch.bfloat16 and not torch.isnan(o).any()
    assert rel_err(o[0].cpu(), o_ref) < 5e-3 and rel_err(ht.cpu(), ht_ref) < 5e-3
    assert vl.calls == {(vl.PREFILL_NAME, "kimiops"): 1}


@gpu
def test_gpu_packed_decode_in_a_cuda_graph(stub_vllm):
    """bf16 at 32 heads, K = V = 128, a padded batch of 8 (three on the null block) captured in a CUDA
    graph through the adapter, replayed with new indices and inputs: the bits of eager direct calls."""
    vl.enable()
    H, K, V = 32, 128, 128
    x = _decode_inputs(8, H, K, V, slots=12, seed=13, device="cuda", dtype=torch.bfloat16)
    idx = torch.tensor([3, 0, 5, 1, 0, 7, 0, 2], dtype=torch.int32, device="cuda")
    live = {n: x[n].clone() for n in ("mixed", "raw_g", "raw_beta")}
    pool = x["pool"].clone()
    call = lambda: stub_vllm.fused_recurrent_kda_packed_decode(  # noqa: E731
        live["mixed"], live["raw_g"], live["raw_beta"], x["A_log"], x["dt_bias"], None, pool, idx)[0]
    call()  # compile and record outside the capture
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        o = call()
    y = _decode_inputs(8, H, K, V, slots=12, seed=14, device="cuda", dtype=torch.bfloat16)
    for n in live:
        live[n].copy_(y[n])
    idx.copy_(torch.tensor([0, 4, 0, 9, 6, 0, 11, 0], dtype=torch.int32))
    pool.copy_(x["pool"])
    graph.replay()
    ref_o, ref_pool = _direct(dict(y, A_log=x["A_log"], dt_bias=x["dt_bias"], pool=x["pool"]), H, K, V, idx)
    assert torch.equal(_bits(o[0]), _bits(ref_o[:, 0])) and torch.equal(_bits(pool), _bits(ref_pool))
    assert pool[0].isnan().all()
