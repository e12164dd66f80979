"""Triton chunked prefill pipeline (kimiops/kda/kernels/chunk.py) against the fp64 oracle.

CPU: the kernels run in Triton's interpreter (TRITON_INTERPRET=1, set by tests/conftest.py) on
small fp32/fp16 shapes (the interpreter cannot compute bf16). GPU (``gpu`` marker): bf16 at
K = V = 128, the accuracy acceptance of issue 3 (T = 4096, H = 4, three gate families), CUDA-graph
capture/replay and two concurrent streams.
"""

from __future__ import annotations

import math

import pytest
import torch

from kimiops.kda import workspace
from kimiops.kda.gate import beta_from_logits, kda_gate, l2norm
from kimiops.kda.kernels.chunk import _SCRATCH_KEYS, PIPELINE_CONFIG, _plan, chunk_kda_fwd, pipeline_parts
from kimiops.kda.kernels.chunk_state import (
    STATE_CANDIDATES,
    STATE_CONFIG_K256,
    STATE_CONFIG_NARROW,
    STATE_CONFIG_WIDE,
)
from kimiops.kda.reference import intra_chunk_scores, naive_recurrent_kda
from kimiops.testing import rel_err, tf32_rounded

HAS_CUDA = torch.cuda.is_available()
POISON = float("nan")


# --------------------------------------------------------------------------- helpers
def make_inputs(B, T, H, HV, K, V, gate, dtype, device, seed=0, mild=True):
    """Inputs in the form the launcher takes (raw gate logits unless gate == "none")."""
    gen = torch.Generator().manual_seed(seed)

    def rnd(*shape, s=1.0):
        return (torch.randn(*shape, generator=gen) * s).to(device)

    q = rnd(B, T, H, K)
    k = rnd(B, T, H, K)
    v = rnd(B, T, HV, V)
    beta_raw = rnd(B, T, HV)
    A_log = dt_bias = None
    lb = None
    if gate == "none":
        # precomputed log decay: logsigmoid, mild (about -0.1 .. -2 per step)
        g = torch.nn.functional.logsigmoid(rnd(B, T, HV, K) + (3.0 if mild else 0.0))
    elif gate == "softplus":
        if mild:
            A_log = torch.log(torch.rand(HV, generator=gen) * 4 + 0.5).to(device)
            g = rnd(B, T, HV, K)
            dt_bias = rnd(HV * K, s=0.5)
        else:  # Kimi-Linear-like: exp(A_log) up to 200, |g| up to ~3e3 per step
            A_log = torch.log(torch.linspace(1.0, 200.0, HV)).to(device)
            g = rnd(B, T, HV, K, s=6.0)
            dt_bias = rnd(HV * K, s=4.0)
    elif gate == "lower_bound":
        lb = -5.0
        A_log = torch.log(torch.rand(HV, generator=gen) * 8 + 1).to(device)
        g = rnd(B, T, HV, K, s=2.0)
        dt_bias = rnd(HV * K)
    else:
        raise ValueError(gate)
    cast = lambda x: x.to(dtype).contiguous()  # noqa: E731
    return dict(q=cast(q), k=cast(k), v=cast(v), g=cast(g), beta=cast(beta_raw), A_log=A_log,
                dt_bias=dt_bias, lower_bound=lb)


def with_slow_decay(inp, seed=0):
    """``inp`` with a precomputed log decay of about -3e-4 per step (gate "none"): the state keeps
    its past over thousands of tokens, so a segment's state map carries weight (with the other
    gates, decays of 0.05-3 per step, a map over a few chunks is ~0 and its errors go unseen)."""
    gen = torch.Generator().manual_seed(seed)
    g = torch.nn.functional.logsigmoid(torch.randn(inp["g"].shape, generator=gen) + 8.0)
    return dict(inp, g=g.to(inp["g"].device, inp["g"].dtype), A_log=None, dt_bias=None, lower_bound=None)


def with_aligned_keys(inp, noise, gen):
    """``inp`` with keys of one direction per head: ``k = d_h + noise * n_t`` with ``d_h`` and every
    ``n_t`` standard normal (cosine ~1 - noise^2 between any two keys of a head), drawn from ``gen``
    (``[1, T, H, K]`` inputs). With slow decay this is where the intra-chunk inverse is hardest: each
    diagonal block of A_kk is close to beta times a triangle of ones, whose powers grow."""
    _, T, H, K = inp["k"].shape
    k = torch.randn(1, 1, H, K, generator=gen) + noise * torch.randn(1, T, H, K, generator=gen)
    return dict(inp, k=k.to(inp["k"].device, inp["k"].dtype))


def preprocessed(inp, *, gate, l2=True, allow_neg_eigval=False):
    """fp64 CPU ``q, k, v, g, beta`` as the kernels see them after their preprocessing (gate, l2norm,
    sigmoid applied in fp64)."""
    q, k, v, g, beta = (inp[n].double().cpu() for n in ("q", "k", "v", "g", "beta"))
    if gate != "none":
        g = kda_gate(g, inp["A_log"].cpu() if inp["A_log"] is not None else None,
                     inp["dt_bias"].cpu() if inp["dt_bias"] is not None else None,
                     inp["lower_bound"], output_dtype=torch.float64)
    if l2:
        q, k = l2norm(q), l2norm(k)
    return q, k, v, g, beta_from_logits(beta, allow_neg_eigval)


def reference(inp, *, gate, scale, cu_seqlens=None, h0=None, state_v_first=False, l2=True, allow_neg_eigval=False):
    """fp64 naive recurrence on the preprocessed inputs (``preprocessed``)."""
    q, k, v, g, beta = preprocessed(inp, gate=gate, l2=l2, allow_neg_eigval=allow_neg_eigval)
    o, ht = naive_recurrent_kda(
        q, k, v, g, beta, scale=scale, initial_state=None if h0 is None else h0.double().cpu(),
        output_final_state=True, cu_seqlens=None if cu_seqlens is None else cu_seqlens.cpu(),
        state_v_first=state_v_first,
    )
    return o, ht


def run(inp, *, gate, scale, cu_seqlens=None, h0=None, h0_indices=None, ht=None, ht_indices=None,
        state_v_first=False, l2=True, out=None, state_config=None, pipeline_config=None, intra_config=None,
        allow_neg_eigval=False, zero_padding_rows=False):
    return chunk_kda_fwd(
        inp["q"], inp["k"], inp["v"], inp["g"], inp["beta"], scale=scale, cu_seqlens=cu_seqlens,
        h0=h0, h0_indices=h0_indices, ht=ht, ht_indices=ht_indices, state_v_first=state_v_first,
        use_qk_l2norm=l2, use_beta_sigmoid=True, gate=gate, A_log=inp["A_log"], dt_bias=inp["dt_bias"],
        lower_bound=inp["lower_bound"], out=out, state_config=state_config, pipeline_config=pipeline_config,
        intra_config=intra_config, allow_neg_eigval=allow_neg_eigval, zero_padding_rows=zero_padding_rows,
    )


def plan_for(inp, *, gate="softplus", ht=None, state_config=None, pipeline_config=None, allow_neg_eigval=False,
             cu_seqlens=None):
    """The launcher's plan (``chunk._plan``: configs, parts, scratch) for a call on ``inp`` with
    ``gate`` (scale 0.2, q/k L2 norm, beta sigmoid) without launching anything."""
    return _plan(inp["q"], inp["k"], inp["v"], inp["g"], inp["beta"], scale=0.2, cu_seqlens=cu_seqlens, h0=None,
                 h0_indices=None, ht=ht, ht_indices=None, state_v_first=False, use_qk_l2norm=True,
                 use_beta_sigmoid=True, gate=gate, A_log=inp["A_log"], dt_bias=inp["dt_bias"],
                 lower_bound=inp["lower_bound"], out=None, intra_config=None, state_config=state_config,
                 pipeline_config=pipeline_config, allow_neg_eigval=allow_neg_eigval)


def finite(t):
    return bool(torch.isfinite(t.float()).all())


def bits(t):
    return t.contiguous().view(torch.int32).clone()


# --------------------------------------------------------------------------- CPU (interpreter) + GPU
CASES = [
    # (gate, mild, dtype, B, T, H, HV, K, V, l2)
    ("none", True, torch.float32, 2, 70, 1, 2, 32, 32, True),
    ("softplus", True, torch.float16, 1, 130, 2, 4, 32, 64, True),
    ("softplus", False, torch.float32, 1, 96, 1, 2, 32, 32, True),
    ("lower_bound", True, torch.float32, 1, 100, 2, 2, 64, 32, True),
    ("none", True, torch.float32, 1, 64, 1, 1, 32, 32, False),
    # head dims 256: the state stage takes STATE_CONFIG_K256 for K = 256
    ("softplus", False, torch.float32, 1, 70, 1, 2, 256, 256, True),
    ("lower_bound", True, torch.float16, 1, 40, 1, 1, 128, 256, True),
]


@pytest.mark.parametrize("gate,mild,dtype,B,T,H,HV,K,V,l2", CASES)
def test_chunk_matches_oracle(device, gate, mild, dtype, B, T, H, HV, K, V, l2):
    inp = make_inputs(B, T, H, HV, K, V, gate, dtype, device, seed=T, mild=mild)
    if not l2:  # the delta rule needs |k| ~ 1: pass pre-normalized q, k (as FLA's callers do)
        inp["q"], inp["k"] = (l2norm(inp[n].float()).to(dtype) for n in ("q", "k"))
    scale = K**-0.5
    h0 = torch.randn(B, HV, K, V, device=device) * 0.5
    ht = torch.full_like(h0, POISON)
    out = torch.full((B, T, HV, V), POISON, dtype=dtype, device=device)
    o = run(inp, gate=gate, scale=scale, h0=h0, ht=ht, l2=l2, out=out)
    assert o.data_ptr() == out.data_ptr()
    ro, rs = reference(inp, gate=gate, scale=scale, h0=h0, l2=l2)
    assert finite(o) and finite(ht)
    tol = 3e-3 if dtype == torch.float32 else 6e-3
    assert rel_err(o, ro) < tol, rel_err(o, ro)
    assert rel_err(ht, rs) < tol, rel_err(ht, rs)


ONE_WARP = dict(STATE_CONFIG_NARROW, BV=16, num_warps=1, num_stages=2)  # another layout


@pytest.mark.parametrize("state_config", [STATE_CONFIG_NARROW, STATE_CONFIG_WIDE, ONE_WARP], ids=["narrow", "wide", "1warp"])
def test_state_configs_match_oracle(device, state_config):
    """The state stage's tilings (the default is the wide one) give the oracle's result."""
    inp = make_inputs(2, 100, 2, 4, 32, 64, "softplus", torch.float32, device, seed=3)
    h0 = torch.randn(2, 4, 32, 64, device=device) * 0.5
    ht = torch.full_like(h0, POISON)
    o = run(inp, gate="softplus", scale=0.2, h0=h0, ht=ht, state_config=state_config)
    ro, rs = reference(inp, gate="softplus", scale=0.2, h0=h0)
    assert rel_err(o, ro) < 3e-3 and rel_err(ht, rs) < 3e-3


@pytest.mark.parametrize("B,T,H,pipeline", [(1, 64, 2, None), (8, 100, 16, None),
                                             (1, 200, 2, {"min_parts": 3, "max_parts": 3, "min_part_slots": 1})])
def test_default_state_tile_is_wide(B, T, H, pipeline):
    """Few or many (sequence, head) pairs, one part or several: the launcher takes the wide tile,
    with ``state_stages`` pipeline stages when there are parts; a given state config wins."""
    inp = make_inputs(B, T, H, H, 32, 32, "softplus", torch.float32, "cpu", seed=5)
    plan = plan_for(inp, pipeline_config=pipeline)
    parted = pipeline is not None
    assert (len(plan["parts"]) > 1) == parted
    stages = PIPELINE_CONFIG["state_stages"] if parted else STATE_CONFIG_WIDE["num_stages"]
    assert plan["sc"] == dict(STATE_CONFIG_WIDE, num_stages=stages)
    plan = plan_for(inp, state_config={"num_stages": 2}, pipeline_config=pipeline)
    assert plan["sc"] == dict(STATE_CONFIG_WIDE, num_stages=2)


def test_default_state_tile_for_head_dim_256():
    """K = 256 takes its own state tile (the wide one spills there), in one part and in parts."""
    inp = make_inputs(1, 64, 2, 2, 256, 64, "softplus", torch.float32, "cpu", seed=5)
    assert plan_for(inp)["sc"] == STATE_CONFIG_K256
    plan = plan_for(inp, pipeline_config={"min_parts": 2, "max_parts": 2, "min_part_slots": 1})
    assert len(plan["parts"]) == 2
    assert plan["sc"] == dict(STATE_CONFIG_K256, num_stages=PIPELINE_CONFIG["state_stages"])
    inp = make_inputs(1, 64, 2, 2, 128, 256, "softplus", torch.float32, "cpu", seed=5)
    assert plan_for(inp)["sc"] == STATE_CONFIG_WIDE  # V alone does not change the tile


def test_state_candidates_are_complete_configs():
    """Every swept candidate names every key of the default (a partial one would silently take the
    wide tile's remaining keys)."""
    for cand in STATE_CANDIDATES:
        assert cand.keys() == STATE_CONFIG_WIDE.keys()


@pytest.mark.parametrize("intra", [None, {"BK2": 32}], ids=["default", "bk2_32"])
def test_huge_softplus_gates_finite_and_exact(device, intra):
    """|g| per step up to ~3e3 and in-chunk spans of ~1e5: every exponent must stay <= 0 (the fp16
    hi/lo halves of g clamp at -2^15 without changing a result)."""
    inp = make_inputs(1, 80, 1, 2, 32, 32, "softplus", torch.float32, device, seed=7, mild=False)
    inp["A_log"] = torch.tensor([math.log(200.0), math.log(60.0)], device=device)
    inp["g"] = (inp["g"] * 2 + 8).contiguous()  # softplus argument mostly ~ 8..20 -> |g| ~ 1e3..3e3
    g_eff = kda_gate(inp["g"].double().cpu(), inp["A_log"].cpu(), inp["dt_bias"].cpu())
    assert g_eff.min() < -2.5e3 and g_eff[:, :64].sum(1).min() < -6e4  # span inside the first chunk
    ht = torch.empty(1, 2, 32, 32, device=device)
    o = run(inp, gate="softplus", scale=0.2, ht=ht, intra_config=intra)
    ro, rs = reference(inp, gate="softplus", scale=0.2)
    assert finite(o) and finite(ht)
    assert rel_err(o, ro) < 3e-3 and rel_err(ht, rs) < 3e-3


def test_gate_regimes_differ_between_k_slices(device):
    """Precomputed g whose four 16-channel K slices (stage 1's BK) sit in different regimes: mild
    (logsigmoid), huge (-100 .. -3000 per step), and a constant step just inside (-2.4) and just
    outside (-2.6) 40 per 16-row block, the anchored diagonal's bound; the regimes rotate between
    the chunks, and the last chunk is partial. A kernel that picks its factorization per slice
    (``cpu_checks_20261202_s35/candidate_bounded_span_switch.patch``) takes both branches in one
    call here."""
    T, K = 90, 64
    inp = make_inputs(1, T, 1, 2, K, 32, "none", torch.float32, device, seed=13, mild=True)
    gen = torch.Generator().manual_seed(13)
    regimes = [torch.nn.functional.logsigmoid(torch.randn(T, 2, 16, generator=gen) + 2.0),
               -torch.empty(T, 2, 16).uniform_(100.0, 3000.0, generator=gen),
               torch.full((T, 2, 16), -2.4), torch.full((T, 2, 16), -2.6)]
    g = torch.empty(1, T, 2, K)
    for c in range(0, T, 32):  # chunk c // 32 rotates the regimes by one slice
        for s_ in range(4):
            g[0, c:c + 32, :, s_ * 16:(s_ + 1) * 16] = regimes[(s_ + c // 32) % 4][c:c + 32]
    inp["g"] = g.to(device)
    ht = torch.full((1, 2, K, 32), POISON, device=device)
    o = run(inp, gate="none", scale=K**-0.5, ht=ht)
    ro, rs = reference(inp, gate="none", scale=K**-0.5)
    assert finite(o) and finite(ht)
    assert rel_err(o, ro) < 3e-3 and rel_err(ht, rs) < 3e-3, (rel_err(o, ro), rel_err(ht, rs))


def _inputs_at_the_bound(device, lower_bound, qk_scale, ordinary_rows=None):
    """Lower-bound-gate inputs (T = 100, one q/k head, two value heads, K = 64, V = 32, fp32) with
    every step at the bound (logit +60: g = lower_bound) on the even channels and g = 0 (logit -60)
    on the odd ones, except the ``ordinary_rows`` slice, which keeps random logits; dt_bias 0; raw
    q, k times ``qk_scale``."""
    inp = make_inputs(1, 100, 1, 2, 64, 32, "lower_bound", torch.float32, device, seed=5, mild=True)
    logits = torch.full_like(inp["g"], 60.0)
    logits[..., 1::2] = -60.0
    if ordinary_rows is not None:
        logits[:, ordinary_rows] = inp["g"][:, ordinary_rows]
    return dict(inp, g=logits.contiguous(), dt_bias=torch.zeros_like(inp["dt_bias"]), lower_bound=lower_bound,
                q=(inp["q"] * qk_scale).contiguous(), k=(inp["k"] * qk_scale).contiguous())


def test_lower_bound_gate_at_its_bound_anchored_diagonal_finite_and_exact(device):
    """The lower-bound gate's diagonal blocks factor through one anchor row (``diag_anchor``): with
    every step at the bound (g = -5: factors up to e^40, masked products up to e^75) on half the
    channels, g = 0 on the others, and raw q, k of norm ~1e4 (normalized in the kernel), o and the
    state stay finite and match the fp64 oracle, as the four-level hierarchy does."""
    inp = _inputs_at_the_bound(device, -5.0, 1e3, ordinary_rows=slice(40, 60))
    g_eff = kda_gate(inp["g"].double().cpu(), inp["A_log"].cpu(), inp["dt_bias"].cpu(), -5.0)
    assert g_eff.min() == -5.0 and g_eff[:, :16].sum(1).min() == -80.0
    ro, rs = reference(inp, gate="lower_bound", scale=0.2)
    for anchor in (True, False):
        ht = torch.full((1, 2, 64, 32), POISON, device=device)
        o = run(inp, gate="lower_bound", scale=0.2, ht=ht, intra_config={"diag_anchor": anchor})
        assert finite(o) and finite(ht)
        assert rel_err(o, ro) < 3e-3 and rel_err(ht, rs) < 3e-3, anchor


def test_launcher_keeps_the_hierarchy_below_the_anchors_bound(device):
    """The public ops keep lower_bound in [-5, 0); the launcher itself (``chunk_kda_fwd``) takes the
    anchored diagonal only there: at -10 (factors up to e^80, which overflow with |q| ~ 1e4) it
    runs the hierarchy and stays finite and exact."""
    inp = _inputs_at_the_bound(device, -10.0, 1e4)
    ht = torch.full((1, 2, 64, 32), POISON, device=device)
    o = run(inp, gate="lower_bound", scale=0.2, ht=ht)
    ro, rs = reference(inp, gate="lower_bound", scale=0.2)
    assert finite(o) and finite(ht)
    assert rel_err(o, ro) < 3e-3 and rel_err(ht, rs) < 3e-3


@pytest.mark.parametrize("parts", [1, 2])
def test_plan_launched_stage_by_stage_gives_the_call(device, parts):
    """``chunk._plan`` then ``_launch_intra`` and ``_launch_state`` (what the benchmarks time stage by
    stage) give the bits of a whole ``chunk_kda_fwd`` call, in one piece and in parts."""
    from kimiops.kda.kernels import chunk as chunk_mod

    pipeline = {"min_parts": parts, "max_parts": parts, "min_part_slots": 1}
    inp = make_inputs(1, 150, 1, 2, 32, 32, "softplus", torch.float32, device, seed=5)
    ht = torch.full((1, 2, 32, 32), POISON, device=device)
    plan = plan_for(inp, ht=ht, pipeline_config=pipeline)
    assert len(plan["parts"]) == parts and plan.get("seg_max", 1) == 1
    chunk_mod._launch_intra(plan)
    chunk_mod._launch_state(plan)
    ht_call = torch.full_like(ht, POISON)
    o_call = run(inp, gate="softplus", scale=0.2, ht=ht_call, pipeline_config=pipeline)
    assert torch.equal(bits(plan["o"]), bits(o_call)) and torch.equal(bits(ht), bits(ht_call))


@pytest.mark.parametrize("inv_prec", ["tf32", "ieee"])
def test_stage1_stores_tb_exact_in_tf32_for_tf32_dots(device, monkeypatch, inv_prec):
    """The state stage's ``u = tb v`` is a tf32 dot whose MMA truncates fp32 operands, so stage 1
    stores ``tb = Tinv diag(beta)`` rounded to nearest tf32 (the low 13 bits zero) and, with
    ``inv_prec="ieee"``, with every fp32 bit."""
    from kimiops.kda.kernels import chunk as chunk_mod

    monkeypatch.setitem(chunk_mod.NUMERICS_CONFIG, "inv_prec", inv_prec)
    inp = make_inputs(1, 70, 1, 2, 32, 32, "softplus", torch.float32, device, seed=3, mild=False)
    plan = plan_for(inp)
    tb = plan["tb"][:, :plan["NC"]]
    tb.fill_(1.0 + 2.0 ** -20)  # low bits set: every entry must be overwritten
    chunk_mod._launch_intra(plan)
    low = tb.contiguous().view(torch.int32) & 0x1FFF
    assert finite(tb) and tb.abs().max() > 0.5
    if inv_prec == "tf32":
        assert not low.any()
    else:
        assert low.count_nonzero() > tb.numel() // 4


def test_fp32_v_enters_u_rounded_to_tf32(device):
    """The state stage rounds fp32 v to nearest tf32 before ``u = tb v`` (bf16 / fp16 v is exact in
    tf32): v and v rounded on the host (ties away from zero) give the same bits of o and the state."""
    inp = make_inputs(1, 70, 1, 2, 32, 32, "softplus", torch.float32, device, seed=5, mild=False)
    v_tf32 = tf32_rounded(inp["v"].cpu()).to(device)
    assert not torch.equal(v_tf32, inp["v"])
    outs = []
    for v in (inp["v"], v_tf32):
        ht = torch.full((1, 2, 32, 32), POISON, device=device)
        o = run(dict(inp, v=v), gate="softplus", scale=0.2, ht=ht)
        outs.append((bits(o), bits(ht)))
    assert torch.equal(outs[0][0], outs[1][0]) and torch.equal(outs[0][1], outs[1][1])


def _stage1_reference(inp, *, gate, scale, C=32, allow_neg_eigval=False):
    """fp64 A_qk and ``tb = (I + A_kk)^-1 diag(beta)`` per chunk, ``[HV, B * NT, C, C]`` like stage 1's
    scratch (rows past a sequence's end zero), and ``gC = e^{G_C}`` ``[HV, B * NT, K]``, from the
    preprocessed inputs (``preprocessed``)."""
    q, k, _, g, beta = preprocessed(inp, gate=gate, allow_neg_eigval=allow_neg_eigval)
    B, T, H, K = q.shape
    HV = g.shape[2]
    NT = -(-T // C)
    pad = lambda x: torch.nn.functional.pad(x, (0, 0) * (x.dim() - 2) + (0, NT * C - T))  # noqa: E731
    rep = lambda x: x.repeat_interleave(HV // H, dim=2)  # noqa: E731  (q/k head of each value head)
    # [B, NT*C, HV, D] -> [HV, B * NT, C, D]
    chunks = lambda x: x.reshape(B, NT, C, HV, -1).permute(3, 0, 1, 2, 4).reshape(HV, B * NT, C, -1)  # noqa: E731
    qc, kc, gc = chunks(pad(rep(q))), chunks(pad(rep(k))), chunks(pad(g))
    bc = chunks(pad(beta.unsqueeze(-1)))  # [HV, B * NT, C, 1]
    G = gc.cumsum(-2)
    aqk = scale * intra_chunk_scores(qc, kc, G, include_diagonal=True)
    akk = bc * intra_chunk_scores(kc, kc, G, include_diagonal=False)
    tb = torch.linalg.inv(torch.eye(C, dtype=torch.float64) + akk) * bc.transpose(-1, -2)
    return aqk, tb, G[..., -1, :].exp()


@pytest.mark.skipif(HAS_CUDA, reason="interpreter only: on the GPU, fp32 score dots run in tf32 (numerics' default)")
@pytest.mark.parametrize("gate,mild", [("none", True), ("softplus", True), ("softplus", False)])
def test_stage1_exponents_carry_fp32_precision(device, monkeypatch, gate, mild):
    """Stage 1's exponents (sums of g over row spans: 0/1-matrix products with g's fp16 halves, ~22
    bits) leave A_qk, tb and gC at fp32 precision against fp64 once the stage's other roundings are
    off (fp32 score operands and scratch, ieee inverse): ~1e-7. With g's ``hi`` half alone (~11 bits)
    in any of the products it is 1e-6 or more. (The lower-bound gate's anchored diagonal rounds its
    operands to tf32 by design: not covered here.)"""
    from kimiops.kda.kernels import chunk as chunk_mod

    monkeypatch.setitem(chunk_mod.NUMERICS_CONFIG, "dot_dtype", "fp32")
    monkeypatch.setitem(chunk_mod.NUMERICS_CONFIG, "inter_dtype", torch.float32)
    monkeypatch.setitem(chunk_mod.NUMERICS_CONFIG, "inv_prec", "ieee")
    inp = make_inputs(1, 70, 1, 2, 32, 32, gate, torch.float32, device, seed=3, mild=mild)
    plan = plan_for(inp, gate=gate)
    chunk_mod._launch_intra(plan)
    ref_aqk, ref_tb, ref_gc = _stage1_reference(inp, gate=gate, scale=0.2)
    nc = plan["NC"]
    assert rel_err(plan["aqk"][:, :nc], ref_aqk) < 1e-6
    assert rel_err(plan["tb"][:, :nc], ref_tb) < 4e-7
    assert rel_err(plan["gc"][:, :nc], ref_gc) < 1e-6


@pytest.mark.skipif(HAS_CUDA, reason="interpreter only: on the GPU, fp32 score dots run in tf32 (numerics' default)")
@pytest.mark.parametrize("neg_eigval", [False, True], ids=["beta-1", "beta-2"])
def test_stage1_inverse_exact_for_aligned_keys_and_slow_decay(device, monkeypatch, neg_eigval):
    """Keys of one direction (cosine ~0.9999 between any two), decays of ~3e-4 per step and beta
    near 1 (near 2 with ``allow_neg_eigval``): each 16x16 diagonal block of A_kk is then close to
    beta times the strictly lower triangle of ones, whose inverse stays O(1) while its powers do not
    (``L^8`` reaches ~6e3 beta^8). With the stage's other roundings off (as in the test above) tb is
    4e-7 (beta ~1) / 3e-6 (beta ~2) from fp64 with forward substitution; an inverse summed from powers
    of L cancels those terms and loses digits, e.g. ``(I - L)(I + L^2)(I + L^4)(I + L^8)``
    (``benchmarks/results/cpu_checks_20261204_s42/candidate_inverse_products.patch``): 4.9e-5 / 2.4e-2
    here in fp32, 1e-1 and 25 with the GPU's tf32 operands in a model (``inverse_products_model.log``
    there, ``--stress``). The random keys of the other tests keep every block far from this case."""
    from kimiops.kda.kernels import chunk as chunk_mod

    monkeypatch.setitem(chunk_mod.NUMERICS_CONFIG, "dot_dtype", "fp32")
    monkeypatch.setitem(chunk_mod.NUMERICS_CONFIG, "inter_dtype", torch.float32)
    monkeypatch.setitem(chunk_mod.NUMERICS_CONFIG, "inv_prec", "ieee")
    T, K = 70, 32
    gen = torch.Generator().manual_seed(5)
    inp = make_inputs(1, T, 1, 1, K, 32, "none", torch.float32, device, seed=5, mild=True)
    inp = with_aligned_keys(inp, 0.01, gen)
    inp["beta"] = torch.full((1, T, 1), 6.0, device=device)  # sigmoid 0.9975 (x2 with neg_eigval)
    inp = with_slow_decay(inp, seed=5)
    plan = plan_for(inp, gate="none", allow_neg_eigval=neg_eigval)
    chunk_mod._launch_intra(plan)
    _, ref_tb, _ = _stage1_reference(inp, gate="none", scale=0.2, allow_neg_eigval=neg_eigval)
    assert ref_tb.abs().max() > (1.5 if neg_eigval else 0.9)
    assert rel_err(plan["tb"][:, :plan["NC"]], ref_tb) < 1e-5


@pytest.mark.parametrize("gate,mild", [("softplus", False), ("lower_bound", True), ("none", False)])
def test_gate_stash_gives_the_bits_of_evaluating_the_gate_twice(device, gate, mild):
    """Pass 1 parks the gated g's halves in the qg / kg scratch for pass 2 (``stash_g``, the
    default): o and the final state are bit-identical to pass 2 reloading g and re-running the gate
    and the split, with huge gates, varlen rows past a sequence's end and a chunk that ends mid-way."""
    cu = torch.tensor([0, 1, 33, 90, 130], dtype=torch.int32, device=device)
    inp = make_inputs(1, 130, 2, 4, 32, 32, gate, torch.float16, device, seed=11, mild=mild)
    outs = []
    for stash in (True, False):
        ht = torch.full((4, 4, 32, 32), POISON, device=device)
        o = run(inp, gate=gate, scale=0.2, cu_seqlens=cu, ht=ht, intra_config={"stash_g": stash})
        outs.append((bits(o.float()), bits(ht)))
    assert torch.equal(outs[0][0], outs[1][0]) and torch.equal(outs[0][1], outs[1][1])
    ro, rs = reference(inp, gate=gate, scale=0.2, cu_seqlens=cu)
    assert rel_err(o, ro) < 6e-3 and rel_err(ht, rs) < 6e-3


def test_varlen_lengths_both_layouts_gva(device):
    # the issue's lengths (0, 1, 63, 64, 65) and the edges of the kernels' chunk of 32 (31, 32, 33)
    lens = [0, 1, 63, 64, 65, 0, 17, 31, 32, 33]
    cu = torch.tensor([0] + list(torch.tensor(lens).cumsum(0)), dtype=torch.int32, device=device)
    T = int(cu[-1])
    N, HV, K, V = len(lens), 4, 32, 32
    inp = make_inputs(1, T, 2, HV, K, V, "lower_bound", torch.float32, device, seed=3)
    h0_kv = torch.randn(N, HV, K, V, device=device)
    _, rs_kv = reference(inp, gate="lower_bound", scale=0.3, cu_seqlens=cu, h0=h0_kv)
    for v_first in (False, True):
        h0 = h0_kv.transpose(-1, -2).contiguous() if v_first else h0_kv
        ht = torch.full_like(h0, POISON)
        o = run(inp, gate="lower_bound", scale=0.3, cu_seqlens=cu.long() if v_first else cu, h0=h0, ht=ht,
                state_v_first=v_first)
        ro, rs = reference(inp, gate="lower_bound", scale=0.3, cu_seqlens=cu, h0=h0, state_v_first=v_first)
        assert finite(o) and finite(ht)
        assert rel_err(o, ro) < 3e-3
        assert rel_err(ht, rs) < 3e-3
        assert rel_err(ht.transpose(-1, -2) if v_first else ht, rs_kv) < 3e-3
        # zero-length sequences: final state == initial state
        for n, L in enumerate(lens):
            if L == 0:
                assert torch.equal(ht[n], h0[n])


@pytest.mark.parametrize("lens", [[3, 9, 9, 0, 40, 1, 9], [5], [0, 0, 2], list(range(37, 0, -3)) + [7] * 5,
                                  [4, -3, 6]])  # the last: malformed (decreasing) cu_seqlens still give a permutation
def test_longest_first_order(device, lens):
    """The state stage's dispatch order: sequence indices by decreasing length, ties by index."""
    import triton

    from kimiops.kda.kernels.chunk_state import longest_first_kernel

    cu = torch.tensor([0] + list(torch.tensor(lens).cumsum(0)), dtype=torch.int64, device=device)
    order = torch.full((len(lens),), -7, dtype=torch.int32, device=device)
    longest_first_kernel[(1,)](cu, order, len(lens), BLOCK=triton.next_power_of_2(len(lens)))
    expected = sorted(range(len(lens)), key=lambda n: (-lens[n], n))
    assert order.cpu().tolist() == expected


@pytest.mark.parametrize("wide", [False, True])
def test_dispatch_order_does_not_change_results(device, wide):
    """Longest-first vs index order, either tile order inside a sequence, flat or 3-D grid: the same bits."""
    lens = [5, 70, 0, 33, 64]
    cu = torch.tensor([0] + list(torch.tensor(lens).cumsum(0)), dtype=torch.int32, device=device)
    inp = make_inputs(1, int(cu[-1]), 1, 2, 32, 32, "softplus", torch.float32, device, seed=11)
    base = dict(STATE_CONFIG_WIDE if wide else STATE_CONFIG_NARROW)
    results = []
    for over in ({}, {"longest_first": False}, {"v_tiles_adjacent": not base.get("v_tiles_adjacent", False)},
                 {"grid_3d": False}):
        ht = torch.full((len(lens), 2, 32, 32), POISON, device=device)
        o = run(inp, gate="softplus", scale=0.2, cu_seqlens=cu, ht=ht, state_config=dict(base, BV=16, **over))
        results.append((o, ht))
    for o, ht in results[1:]:
        assert torch.equal(o, results[0][0]) and torch.equal(ht, results[0][1])
    ro, rs = reference(inp, gate="softplus", scale=0.2, cu_seqlens=cu)
    assert rel_err(results[0][0], ro) < 3e-3 and rel_err(results[0][1], rs) < 3e-3


def test_pipeline_parts_follow_the_measured_rule():
    """Parts only for one sequence below 64 (sequence, head) pairs: one per 128 slots, at least 4 and
    at most 16, none under 16 slots; contiguous ranges covering every slot (H200 measurements in
    chunk.py)."""
    assert pipeline_parts(256, 32) == [(0, 64), (64, 128), (128, 192), (192, 256)]  # B1 T8192, 32 heads
    assert pipeline_parts(1024, 32) == [(i * 128, i * 128 + 128) for i in range(8)]  # B1 T32768
    assert pipeline_parts(4096, 32) == [(i * 256, i * 256 + 256) for i in range(16)]  # B1 T131072: at most 16
    assert pipeline_parts(4000, 32)[-1] == (3750, 4000) and len(pipeline_parts(4000, 32)) == 16
    assert pipeline_parts(128, 32) == [(0, 32), (32, 64), (64, 96), (96, 128)]  # B1 T4096
    assert pipeline_parts(64, 32) == [(0, 16), (16, 32), (32, 48), (48, 64)]   # B1 T2048
    assert pipeline_parts(32, 32) == [(0, 16), (16, 32)]                     # B1 T1024: parts of 16 slots at least
    assert pipeline_parts(31, 32) == [(0, 31)]                               # too short to split
    assert pipeline_parts(1024, 128) == [(0, 1024)]                          # B4: the state fills the GPU
    assert pipeline_parts(256, 64) == [(0, 256)]                             # B2 T4096: so does it here
    assert len(pipeline_parts(256, 63)) == 4                                 # just below the threshold
    assert pipeline_parts(521, 224) == [(0, 521)]                            # varlen 7 sequences x 32
    assert pipeline_parts(0, 0) == [(0, 0)]
    assert len(pipeline_parts(256, 48)) == 4                                 # one prompt at 48 heads
    assert pipeline_parts(256, 32, seqs=2) == [(0, 256)]                     # B2 T4096 at 16 heads: a batch
    assert pipeline_parts(384, 48, seqs=3) == [(0, 384)]                     # B3 T4096 at 16 heads
    assert len(pipeline_parts(256, 32, {"max_seqs": 2}, seqs=2)) == 4
    for n_slots in (1, 7, 300, 1001):
        parts = pipeline_parts(n_slots, 1, {"min_parts": 5, "max_parts": 5, "min_part_slots": 1})
        assert parts[0][0] == 0 and parts[-1][1] == n_slots
        assert all(a[1] == b[0] and a[0] < a[1] for a, b in zip(parts, parts[1:]))


def _parts(n):
    """Pipeline config that cuts every problem into ``n`` parts (1: one launch per stage)."""
    return {"min_parts": n, "max_parts": n, "min_part_slots": 1, "max_seqs": 1 << 30, "segments": 1}


@pytest.mark.parametrize("n_parts,state_config", [(2, STATE_CONFIG_WIDE), (3, STATE_CONFIG_WIDE),
                                                   (9, STATE_CONFIG_WIDE), (3, ONE_WARP)])
def test_pipelined_parts_bit_identical_varlen_pool(device, n_parts, state_config):
    """Parts chain the state through fp32 scratch: the same bits as one part, for sequences that
    span several parts, empty ones (h0 copied to ht once), padding (-1) and untouched pool slots.
    Both runs take the same state tiling, so only the parts differ."""
    lens = [5, 70, 0, 33, 64, 1]
    cu = torch.tensor([0] + list(torch.tensor(lens).cumsum(0)), dtype=torch.int32, device=device)
    inp = make_inputs(1, int(cu[-1]), 1, 2, 32, 32, "softplus", torch.float32, device, seed=13)
    idx = torch.tensor([4, 0, 6, -1, 2, 5], dtype=torch.int32, device=device)
    results = []
    for cfg in (_parts(1), _parts(n_parts)):
        pool = torch.full((8, 2, 32, 32), POISON, device=device)
        for s_ in (4, 0, 6, 2, 5):
            pool[s_] = torch.randn(pool.shape[1:], generator=torch.Generator().manual_seed(s_)).to(device)
        empty_h0 = bits(pool[6])
        o = run(inp, gate="softplus", scale=0.2, cu_seqlens=cu, h0=pool, h0_indices=idx, ht=pool,
                ht_indices=idx, pipeline_config=cfg, state_config=state_config)
        results.append((o, bits(pool)))
    assert torch.equal(results[0][0], results[1][0])
    assert torch.equal(results[0][1], results[1][1])  # includes the untouched NaN slots 1, 3, 7
    assert torch.equal(results[1][1][6], empty_h0)  # the empty sequence's h0 went to ht unchanged
    assert finite(results[1][0])


@pytest.mark.parametrize("grid_3d", [False, True])
def test_pipelined_parts_bit_identical_fixed_length(device, grid_3d):
    """Fixed-length batch (parts cut across sequence boundaries), both grid shapes."""
    inp = make_inputs(2, 100, 1, 2, 32, 32, "lower_bound", torch.float32, device, seed=17)
    outs = []
    for cfg in (_parts(1), _parts(3)):
        ht = torch.full((2, 2, 32, 32), POISON, device=device)
        o = run(inp, gate="lower_bound", scale=0.2, ht=ht, pipeline_config=cfg,
                state_config=dict(STATE_CONFIG_NARROW, BV=16, grid_3d=grid_3d))
        outs.append((o, ht))
    assert torch.equal(outs[0][0], outs[1][0]) and torch.equal(outs[0][1], outs[1][1])
    ro, rs = reference(inp, gate="lower_bound", scale=0.2)
    assert rel_err(outs[1][0], ro) < 3e-3 and rel_err(outs[1][1], rs) < 3e-3


def test_pipelined_parts_bit_identical_head_dim_256(device):
    """K = V = 256 (its own state tile) in 3 parts gives the bits of one part."""
    inp = make_inputs(1, 100, 1, 1, 256, 256, "softplus", torch.float32, device, seed=19, mild=False)
    outs = []
    for cfg in (_parts(1), _parts(3)):
        ht = torch.full((1, 1, 256, 256), POISON, device=device)
        outs.append((run(inp, gate="softplus", scale=256**-0.5, ht=ht, pipeline_config=cfg), ht))
    assert torch.equal(outs[0][0], outs[1][0]) and torch.equal(outs[0][1], outs[1][1])
    ro, rs = reference(inp, gate="softplus", scale=256**-0.5)
    assert rel_err(outs[1][0], ro) < 3e-3 and rel_err(outs[1][1], rs) < 3e-3


@pytest.mark.parametrize("segments", [2, 3, 7])
@pytest.mark.parametrize("slow", [False, True], ids=["softplus", "slow-decay"])
def test_segmented_walk_fixed_length(device, segments, slow):
    """One sequence's state walk in segments (maps chained by ``segment_starts_kernel``), K-first
    states, dense h0: against the fp64 oracle and the walk in one piece, under unbounded softplus
    gates and under a slow decay (where the maps carry weight)."""
    inp = make_inputs(1, 300, 1, 2, 32, 64, "softplus", torch.float32, device, seed=21, mild=False)
    gate = "softplus"
    if slow:
        inp, gate = with_slow_decay(inp), "none"
    h0 = torch.randn(1, 2, 32, 64, generator=torch.Generator().manual_seed(1)).to(device) * 0.5
    outs = []
    for seg in (1, segments):
        ht = torch.full_like(h0, POISON)
        outs.append((run(inp, gate=gate, scale=0.2, h0=h0, ht=ht, pipeline_config={"segments": seg}), ht))
    ro, rs = reference(inp, gate=gate, scale=0.2, h0=h0)
    for o, ht in outs:
        assert finite(o) and finite(ht)
        assert rel_err(o, ro) < 3e-3 and rel_err(ht, rs) < 3e-3
    assert rel_err(outs[1][0], outs[0][0]) < 1e-3 and rel_err(outs[1][1], outs[0][1]) < 1e-3


@pytest.mark.parametrize("real", [250, 100, 0])
def test_segmented_walk_varlen_pool(device, real):
    """Varlen with one sequence of ``real`` tokens in 300 rows (padding after it: trailing segments
    are empty and pass the state on), V-first pool updated in place, other slots untouched."""
    cu = torch.tensor([0, real], dtype=torch.int32, device=device)
    inp = make_inputs(1, 300, 1, 2, 32, 32, "lower_bound", torch.float32, device, seed=22)
    pool = torch.full((4, 2, 32, 32), POISON, device=device)
    pool[3] = torch.randn(2, 32, 32, generator=torch.Generator().manual_seed(2)).to(device) * 0.5
    h0_ref = pool[3:4].clone()
    before = bits(pool)
    idx = torch.tensor([3], dtype=torch.int32, device=device)
    o = run(inp, gate="lower_bound", scale=0.2, cu_seqlens=cu, h0=pool, h0_indices=idx, ht=pool, ht_indices=idx,
            state_v_first=True, pipeline_config={"segments": 5})
    trimmed = {n: (x[:, :real] if torch.is_tensor(x) and x.dim() > 1 else x) for n, x in inp.items()}
    ro, rs = reference(trimmed, gate="lower_bound", scale=0.2, cu_seqlens=cu, h0=h0_ref, state_v_first=True)
    assert rel_err(o[:, :real], ro) < 3e-3 and rel_err(pool[3:4], rs) < 3e-3
    after = bits(pool)
    assert all(torch.equal(after[s_], before[s_]) for s_ in (0, 1, 2))


@pytest.mark.parametrize("K,V,map_block_bytes", [(32, 32, 2048), (256, 64, 65536)], ids=["K32-blocks16", "K256"])
def test_segmented_walk_map_in_column_blocks(device, monkeypatch, K, V, map_block_bytes):
    """The start states take the map's columns in blocks where the whole map would not fit shared
    memory (K = 256: 64 columns at a time; forced at K = 32 with blocks of 16), the new state going
    through memory: against the oracle and the walk in one piece, dense h0."""
    from kimiops.kda.kernels.chunk_state import SEGMENT_STARTS_CONFIG

    monkeypatch.setitem(SEGMENT_STARTS_CONFIG, "map_block_bytes", map_block_bytes)
    T = 300 if K <= 32 else 100
    inp = with_slow_decay(make_inputs(1, T, 1, 1, K, V, "none", torch.float32, device, seed=25))
    h0 = torch.randn(1, 1, K, V, generator=torch.Generator().manual_seed(6)).to(device) * 0.5
    outs = []
    for seg in (1, 4):
        ht = torch.full_like(h0, POISON)
        outs.append((run(inp, gate="none", scale=K**-0.5, h0=h0, ht=ht, pipeline_config={"segments": seg}), ht))
    ro, rs = reference(inp, gate="none", scale=K**-0.5, h0=h0)
    for o, ht in outs:
        assert finite(o) and finite(ht)
        assert rel_err(o, ro) < 3e-3 and rel_err(ht, rs) < 3e-3
    assert rel_err(outs[1][0], outs[0][0]) < 1e-3 and rel_err(outs[1][1], outs[0][1]) < 1e-3


@pytest.mark.parametrize("segments,seg_max", [(6, 2), (12, 4)])
def test_segmented_walk_fixed_length_batch(device, segments, seg_max):
    """A batch of 3 sequences of 100 tokens (4 chunks of 32) in segments of the batch's 12 chunks:
    6 give 2 per sequence, 12 give 4 (the last one 4 tokens long), dense h0 and ht, slow decay;
    against the oracle and the walk in one piece."""
    from kimiops.kda.kernels.chunk import segment_layout

    assert segment_layout(12, 4, 3, 2, 32, {"segments": segments}) == (4 // seg_max, seg_max)
    inp = with_slow_decay(make_inputs(3, 100, 1, 2, 32, 32, "none", torch.float32, device, seed=23))
    h0 = torch.randn(3, 2, 32, 32, generator=torch.Generator().manual_seed(4)).to(device) * 0.5
    outs = []
    for seg in (1, segments):
        ht = torch.full_like(h0, POISON)
        outs.append((run(inp, gate="none", scale=0.2, h0=h0, ht=ht, pipeline_config={"segments": seg}), ht))
    ro, rs = reference(inp, gate="none", scale=0.2, h0=h0)
    for o, ht in outs:
        assert finite(o) and finite(ht)
        assert rel_err(o, ro) < 3e-3 and rel_err(ht, rs) < 3e-3
    assert rel_err(outs[1][0], outs[0][0]) < 1e-3 and rel_err(outs[1][1], outs[0][1]) < 1e-3


@pytest.mark.parametrize("state_v_first", [False, True])
def test_segmented_walk_varlen_batch_pool(device, state_v_first):
    """Varlen batch in 6 segments of its 20-chunk bound (segments of 4 chunks): sequences of 63, 0,
    300, 1, 130, 65 and 64 tokens (1, 1, 3, 1, 2, 1, 1 segments: the empty one copies h0 to ht),
    padding rows after them, a pool with a -1 and untouched poisoned slots, slow decay (each
    sequence's maps and h0 carry weight); against the oracle and the walk in one piece."""
    from kimiops.kda.kernels.chunk import segment_layout

    lens = [63, 0, 300, 1, 130, 65, 64]
    cu = torch.tensor([0] + list(torch.tensor(lens).cumsum(0)), dtype=torch.int32, device=device)
    live = int(cu[-1])
    assert segment_layout(20, 20, 7, 2, 32, {"segments": 6}) == (4, 5) and live + 17 == 20 * 32
    inp = with_slow_decay(make_inputs(1, live + 17, 1, 2, 32, 32, "none", torch.float32, device, seed=24))
    slots = [5, 2, 0, -1, 7, 3, 6]
    idx = torch.tensor(slots, dtype=torch.int32, device=device)
    named = [s_ for s_ in slots if s_ >= 0]
    shape = (8, 2, 32, 32)
    results = []
    for seg in (1, 6):
        pool = torch.full(shape, POISON, device=device)
        for s_ in named:
            pool[s_] = torch.randn(shape[1:], generator=torch.Generator().manual_seed(s_)).to(device) * 0.5
        h0_ref = pool[[max(s_, 0) for s_ in slots]].clone()
        h0_ref[slots.index(-1)] = 0
        before = bits(pool)
        o = run(inp, gate="none", scale=0.2, cu_seqlens=cu, h0=pool, h0_indices=idx, ht=pool, ht_indices=idx,
                state_v_first=state_v_first, pipeline_config={"segments": seg})
        after = bits(pool)
        assert torch.equal(after[1], before[1]) and torch.equal(after[4], before[4])  # slots no sequence names
        assert torch.equal(after[2], before[2])  # the empty sequence's h0 went to ht unchanged
        results.append((o[:, :live], pool[named].clone()))
    trimmed = {n: (x[:, :live] if torch.is_tensor(x) and x.dim() > 1 else x) for n, x in inp.items()}
    ro, rs = reference(trimmed, gate="none", scale=0.2, cu_seqlens=cu, h0=h0_ref, state_v_first=state_v_first)
    rs = rs[[i for i, s_ in enumerate(slots) if s_ >= 0]]
    for o, states in results:
        assert finite(o) and finite(states)
        assert rel_err(o, ro) < 3e-3 and rel_err(states, rs) < 3e-3
    assert rel_err(results[1][0], results[0][0]) < 1e-3 and rel_err(results[1][1], results[0][1]) < 1e-3


# lengths, plan overrides and the state stage's layout they give (``chunk._plan``): parts for one
# sequence, segments for few (sequence, head) pairs; the last sequence empty where it can be
ZERO_ROW_LAYOUTS = {
    "one": ([5, 40, 0], {"state_config": {"longest_first": False}}),
    "sorted": ([5, 40, 0], {}),
    "parts": ([70], {"pipeline_config": {"min_parts": 2, "max_parts": 2, "min_part_slots": 1}}),
    "segments": ([40, 70, 0], {"pipeline_config": {"segments": 3}}),
    "no sequence": ([], {}),
}


@pytest.mark.parametrize("layout", list(ZERO_ROW_LAYOUTS))
def test_zero_padding_rows(device, layout):
    """``zero_padding_rows`` (``KDABackend.extend``'s varlen calls, whose inputs may carry CUDA-graph
    padding rows past ``cu_seqlens[N]``): o's 37 padding rows (two stores of 32 rows) come out as
    zeros in each layout of the state stage, over a NaN-poisoned ``out``, the real rows as in the
    call without padding rows; without the flag nothing writes them (``chunk_kda``'s contract: no
    padding rows)."""
    lens, overrides = ZERO_ROW_LAYOUTS[layout]
    cu = torch.tensor([0] + torch.tensor(lens, dtype=torch.int64).cumsum(0).tolist(), dtype=torch.int32,
                      device=device)
    live, pad = sum(lens), 37
    inp = make_inputs(1, live + pad, 1, 2, 32, 32, "none", torch.float32, device, seed=31)
    plan = plan_for(inp, gate="none", cu_seqlens=cu, **overrides)
    assert {"one": plan.get("order") is None and len(plan.get("parts", [0])) == 1,
            "sorted": plan.get("order") is not None, "parts": len(plan.get("parts", ())) == 2,
            "segments": plan.get("seg_max", 1) > 1, "no sequence": plan["N"] == 0}[layout]
    outs = {}
    for flag in (True, False):
        out = torch.full(inp["v"].shape, POISON, device=device)
        outs[flag] = run(inp, gate="none", scale=0.2, cu_seqlens=cu, out=out, zero_padding_rows=flag, **overrides)
        assert outs[flag] is out
    assert torch.equal(outs[True][:, live:], torch.zeros_like(outs[True][:, live:]))
    assert bool(outs[False][:, live:].isnan().all())
    assert torch.equal(outs[True][:, :live], outs[False][:, :live])
    if live:
        trimmed = {n: (x[:, :live] if torch.is_tensor(x) and x.dim() > 1 else x) for n, x in inp.items()}
        ro, _ = reference(trimmed, gate="none", scale=0.2, cu_seqlens=cu)
        assert rel_err(outs[True][:, :live], ro) < 3e-3


def test_segment_rule():
    """Segments apply to few (sequence, head) pairs at K <= 128: at most max_segments, at most
    segment_budget // heads, each at least segment_min_chunks chunks (with at most
    long_segments_max_pairs pairs also up to long_segments_max of long_segments_min_chunks), and (by the rule) at least
    segment_min_per_seq for a sequence of the call's bound; forced counts are clamped; a sequence
    gets cdiv(its chunks, seg_len) segments."""
    from kimiops.kda.kernels.chunk import segment_count, segment_layout

    pc = PIPELINE_CONFIG
    assert segment_count(256, 1, 4, 128) == min(pc["max_segments"], 256 // pc["segment_min_chunks"])
    assert segment_count(64, 1, 4, 128) == 64 // pc["segment_min_chunks"]    # T2048: shorter, fewer
    assert segment_count(256, 1, 16, 128) == pc["segment_budget"] // 16      # 16 heads: fewer
    assert segment_count(256, 2, pc["segment_max_pairs"] // 2 + 1, 128) == 1  # too many pairs
    assert segment_count(256, 1, 4, 256) == 1                                # K = 256: not timed
    assert segment_count(1024, 1, 4, 128) == pc["max_segments"]              # B1 T32768, 4 heads: 16
    assert segment_count(1024, 1, 2, 128) == pc["long_segments_max"]         # at 1-2 heads: 32 ...
    assert segment_count(512, 1, 1, 128) == 512 // pc["long_segments_min_chunks"]  # ... of 32+ chunks
    assert segment_count(1024, 2, 2, 128) == pc["max_segments"]              # 4 pairs: 16
    assert segment_count(256, 1, 4, 256, {"segments": 4}) == 4               # but runs when forced
    assert segment_count(1, 1, 4, 128) == 1                                  # one chunk
    assert segment_count(8, 1, 1, 128, {"segments": 40}) == 8                # forced, clamped
    assert segment_count(256, 1, 64, 128, {"segments": 3}) == 3
    assert segment_count(512, 4, 16, 128, {"segments": 8}) == 8              # forced on a batch
    assert segment_layout(256, 256, 1, 4, 128) == (16, 16)                    # B1 T8192 at 4 heads
    assert segment_layout(250, 250, 1, 4, 128, {"segments": 16}) == (16, 16)  # the last one shorter
    assert segment_layout(512, 128, 4, 4, 128) == (32, 4)                     # B4 T4096 at 4 heads: 4 each
    assert segment_layout(512, 256, 2, 8, 128) == (32, 8)                     # B2 T8192 at 8 heads
    assert segment_layout(256, 32, 8, 1, 128) == (0, 1)                       # 2 each: none by the rule
    assert segment_layout(256, 32, 8, 1, 128, {"segments": 16}) == (16, 2)    # unless forced
    assert segment_layout(512, 128, 4, 16, 128, {"segments": 4}) == (0, 1)    # one each: none
    assert segment_layout(512, 512, 7, 2, 128) == (32, 16)                    # varlen: any may be long
    assert segment_layout(256, 256, 1, 4, 128, {"segments": 1}) == (0, 1)


@pytest.mark.parametrize("state_config", [None, ONE_WARP], ids=["default", "1warp"])
def test_pool_in_place_with_padding_and_poison(device, state_config):
    lens = [65, 0, 30, 64]
    cu = torch.tensor([0] + list(torch.tensor(lens).cumsum(0)), dtype=torch.int64, device=device)
    T, HV, K, V, S = int(cu[-1]), 2, 32, 32, 7
    inp = make_inputs(1, T, 1, HV, K, V, "softplus", torch.float32, device, seed=11)
    idx = torch.tensor([5, 2, -1, 0], dtype=torch.int32, device=device)
    for v_first in (False, True):
        pool = torch.full((S, HV, V, K) if v_first else (S, HV, K, V), POISON, device=device)
        for s in (5, 2, 0):
            pool[s] = torch.randn(pool.shape[1:], device=device)
        before = bits(pool)
        h0_ref = torch.stack([pool[i] if i >= 0 else torch.zeros_like(pool[0]) for i in idx.tolist()])
        o = run(inp, gate="softplus", scale=0.25, cu_seqlens=cu, h0=pool, h0_indices=idx, ht=pool,
                ht_indices=idx, state_v_first=v_first, state_config=state_config)
        ro, rs = reference(inp, gate="softplus", scale=0.25, cu_seqlens=cu, h0=h0_ref, state_v_first=v_first)
        assert finite(o)
        assert rel_err(o, ro) < 3e-3
        after = bits(pool)
        for s in range(S):
            if s in (5, 2, 0):
                n = idx.tolist().index(s)
                assert finite(pool[s])
                assert rel_err(pool[s], rs[n]) < 3e-3
            else:  # untouched slots (the -1 sequence included) are bit-identical NaN poison
                assert torch.equal(after[s], before[s])


def test_separate_ht_indices_and_no_h0(device):
    lens = [40, 70]
    cu = torch.tensor([0, 40, 110], dtype=torch.int32, device=device)
    inp = make_inputs(1, 110, 1, 1, 32, 32, "none", torch.float32, device, seed=5)
    ht = torch.full((4, 1, 32, 32), POISON, device=device)
    before = bits(ht)
    o = run(inp, gate="none", scale=0.2, cu_seqlens=cu, ht=ht, ht_indices=torch.tensor([3, -1], device=device))
    ro, rs = reference(inp, gate="none", scale=0.2, cu_seqlens=cu)
    assert rel_err(o, ro) < 3e-3 and rel_err(ht[3], rs[0]) < 3e-3
    after = bits(ht)
    for s in (0, 1, 2):
        assert torch.equal(after[s], before[s])
    assert sum(lens) == 110


@pytest.mark.parametrize("intra,state", [({"BK": 32, "num_warps": 4}, {"BV": 32, "hi_first": False}),
                                         ({"BK": 16, "loop_stages": 2}, {"BV": 64, "num_warps": 4}),
                                         ({}, {"BV": 16, "num_warps": 1, "num_stages": 3}),
                                         ({"BK": 16}, {"num_stages": 2}),
                                         ({"BK2": 64}, {}),
                                         ({}, {"BV": 16, "num_warps": 2, "pow2_scale": True}),
                                         ({}, {"BV": 64, "num_warps": 4, "pow2_scale": False})])
def test_alternate_configs(device, intra, state):
    """The benchmark's sweep candidates compute the same thing (tf32 and split-fp16 state paths)."""
    inp = make_inputs(1, 100, 1, 2, 32, 64, "softplus", torch.float32, device, seed=21, mild=False)
    ht = torch.empty(1, 2, 32, 64, device=device)
    o = chunk_kda_fwd(
        inp["q"], inp["k"], inp["v"], inp["g"], inp["beta"], scale=0.2, cu_seqlens=None, h0=None, h0_indices=None,
        ht=ht, ht_indices=None, state_v_first=False, use_qk_l2norm=True, use_beta_sigmoid=True, gate="softplus",
        A_log=inp["A_log"], dt_bias=inp["dt_bias"], lower_bound=None, intra_config=intra, state_config=state,
    )
    ro, rs = reference(inp, gate="softplus", scale=0.2)
    assert rel_err(o, ro) < 3e-3 and rel_err(ht, rs) < 3e-3


def test_workspace_reuse_and_empty_cache(device):
    inp = make_inputs(1, 64, 1, 1, 32, 32, "none", torch.float32, device, seed=1)
    workspace.empty_cache()
    run(inp, gate="none", scale=0.2)
    held = workspace.cached_bytes()
    assert held > 0
    run(inp, gate="none", scale=0.2)
    assert workspace.cached_bytes() == held  # same shapes: reused, nothing new
    workspace.empty_cache()
    assert workspace.cached_bytes() == 0


# --------------------------------------------------------------------------- GPU only
def _gpu_inputs(gate, mild, T=4096, H=4, HV=4, K=128, V=128, seed=0):
    return make_inputs(1, T, H, HV, K, V, gate, torch.bfloat16, "cuda", seed=seed, mild=mild)


@pytest.mark.gpu
@pytest.mark.parametrize("gate,mild", [("none", True), ("softplus", True), ("softplus", False), ("lower_bound", True)])
def test_gpu_accuracy_acceptance(gate, mild):
    """Issue 3: bf16, T=4096, H=4 vs fp64 recurrence: o <= 3e-3, final state <= 2.5e-3."""
    inp = _gpu_inputs(gate, mild)
    ht = torch.full((1, 4, 128, 128), POISON, device="cuda")
    o = run(inp, gate=gate, scale=128**-0.5, ht=ht)
    ro, rs = reference(inp, gate=gate, scale=128**-0.5)
    assert finite(o) and finite(ht)
    eo, es = rel_err(o, ro), rel_err(ht, rs)
    print(f"{gate} mild={mild}: rel o {eo:.2e}, rel state {es:.2e}")
    assert eo <= 3e-3 and es <= 2.5e-3


@pytest.mark.gpu
@pytest.mark.parametrize("gate,mild", [("softplus", False), ("lower_bound", True)])
def test_gpu_accuracy_allow_neg_eigval(gate, mild):
    """FLA's allow_neg_eigval (beta = 2 sigmoid, up to 2) at the acceptance shape and accuracy."""
    inp = _gpu_inputs(gate, mild)
    ht = torch.full((1, 4, 128, 128), POISON, device="cuda")
    o = run(inp, gate=gate, scale=128**-0.5, ht=ht, allow_neg_eigval=True)
    ro, rs = reference(inp, gate=gate, scale=128**-0.5, allow_neg_eigval=True)
    assert finite(o) and finite(ht)
    eo, es = rel_err(o, ro), rel_err(ht, rs)
    print(f"allow_neg_eigval {gate} mild={mild}: rel o {eo:.2e}, rel state {es:.2e}")
    assert eo <= 3e-3 and es <= 2.5e-3


@pytest.mark.gpu
@pytest.mark.parametrize("gate,mild", [("softplus", False), ("lower_bound", True)])
@pytest.mark.parametrize("K,V", [(256, 256), (128, 256), (256, 128)])
def test_gpu_accuracy_head_dims_256(gate, mild, K, V):
    """The issue's accuracy at head dims 256 (bf16, T=4096, H=4): o <= 3e-3, final state <= 2.5e-3."""
    inp = _gpu_inputs(gate, mild, K=K, V=V)
    ht = torch.full((1, 4, K, V), POISON, device="cuda")
    o = run(inp, gate=gate, scale=K**-0.5, ht=ht)
    ro, rs = reference(inp, gate=gate, scale=K**-0.5)
    assert finite(o) and finite(ht)
    eo, es = rel_err(o, ro), rel_err(ht, rs)
    print(f"K={K} V={V} {gate} mild={mild}: rel o {eo:.2e}, rel state {es:.2e}")
    assert eo <= 3e-3 and es <= 2.5e-3


@pytest.mark.gpu
@pytest.mark.parametrize("K,V", [(128, 128), (256, 256)])
def test_gpu_accuracy_segments_slow_decay(K, V):
    """Segments where their maps carry weight (a slow decay, ~-3e-4 per step: the state remembers
    the whole prompt), bf16, T=4096, H=4, 8 segments (the rule's choice at K = 128, forced at 256):
    the issue's accuracy against the fp64 oracle, and the walk in one piece within the same."""
    inp = with_slow_decay(_gpu_inputs("none", True, K=K, V=V), seed=7)
    ro, rs = reference(inp, gate="none", scale=K**-0.5)
    errs = []
    for seg in (8, 1):
        ht = torch.full((1, 4, K, V), POISON, device="cuda")
        o = run(inp, gate="none", scale=K**-0.5, ht=ht, pipeline_config={"segments": seg})
        assert finite(o) and finite(ht)
        errs.append((rel_err(o, ro), rel_err(ht, rs)))
    print(f"K={K} V={V} slow decay: 8 segments rel o {errs[0][0]:.2e}, state {errs[0][1]:.2e}; "
          f"one piece o {errs[1][0]:.2e}, state {errs[1][1]:.2e}")
    for eo, es in errs:
        assert eo <= 3e-3 and es <= 2.5e-3


@pytest.mark.gpu
@pytest.mark.parametrize("state", [STATE_CONFIG_NARROW, STATE_CONFIG_WIDE,
                                   dict(STATE_CONFIG_NARROW, BV=32, num_warps=2, num_stages=3),
                                   dict(STATE_CONFIG_NARROW, split_ws=True, split_kv=True),
                                   dict(STATE_CONFIG_NARROW, split_ws=False, split_kv=False)],
                         ids=["narrow", "wide", "bv32", "split-both", "split-none"])
def test_gpu_state_configs_accuracy(state):
    """Each state tiling meets the issue's accuracy at the acceptance shape with unbounded softplus
    gates (the launcher takes the wide tiling; the others are what the benchmarks sweep)."""
    inp = _gpu_inputs("softplus", False)
    ht = torch.full((1, 4, 128, 128), POISON, device="cuda")
    o = run(inp, gate="softplus", scale=128**-0.5, ht=ht, state_config=state)
    ro, rs = reference(inp, gate="softplus", scale=128**-0.5)
    eo, es = rel_err(o, ro), rel_err(ht, rs)
    print(f"{state}: rel o {eo:.2e}, rel state {es:.2e}")
    assert finite(o) and finite(ht) and eo <= 3e-3 and es <= 2.5e-3


@pytest.mark.gpu
def test_gpu_state_stages_beyond_shared_memory_fall_back():
    """A state pipeline deeper than the device's shared memory holds (8 stages of the wide tile:
    ~270 KiB against 227 on the H200) runs with fewer stages (``kimiops.launch``), within the
    device's limit, and gives the bits of the default config."""
    from kimiops.kda.kernels.chunk import _launch_intra, _launch_state

    inp = _gpu_inputs("softplus", False, T=1024, H=2, HV=4)
    outs = []
    for state_config in (None, {"num_stages": 8}):
        ht = torch.full((1, 4, 128, 128), POISON, device="cuda")
        plan = plan_for(inp, ht=ht, state_config=state_config, pipeline_config={"max_parts": 1, "segments": 1})
        _launch_intra(plan)
        ck = _launch_state(plan)
        outs.append((bits(plan["o"]), bits(ht)))
    limit = torch.cuda.get_device_properties(0).shared_memory_per_block_optin
    assert ck.metadata.num_stages < 8 and ck.metadata.shared <= limit
    assert torch.equal(outs[0][0], outs[1][0]) and torch.equal(outs[0][1], outs[1][1])


@pytest.mark.gpu
def test_gpu_many_sequences_default_state_tiles():
    """8 sequences x 16 heads with the launcher's own state tiling."""
    inp = make_inputs(8, 200, 16, 16, 128, 128, "softplus", torch.bfloat16, "cuda", seed=4, mild=False)
    ht = torch.full((8, 16, 128, 128), POISON, device="cuda")
    o = run(inp, gate="softplus", scale=128**-0.5, ht=ht)
    ro, rs = reference(inp, gate="softplus", scale=128**-0.5)
    assert rel_err(o, ro) <= 3e-3 and rel_err(ht, rs) <= 2.5e-3


@pytest.mark.gpu
@pytest.mark.parametrize("segments", [0, 8], ids=["rule", "segments8"])
@pytest.mark.parametrize("gate,mild", [("none", True), ("softplus", False), ("lower_bound", True)])
def test_gpu_varlen_pool_bf16(gate, mild, segments):
    """bf16 varlen batch with lengths 0, 1, 63, 64, 65, 300, 1000 into a pool with a -1, by the
    launcher's rule and in 8 segments of the batch's 47-chunk bound (up to 6 per sequence)."""
    lens = [0, 1, 63, 64, 65, 300, 1000]
    cu = torch.tensor([0] + list(torch.tensor(lens).cumsum(0)), dtype=torch.int32, device="cuda")
    T = int(cu[-1])
    inp = make_inputs(1, T, 2, 4, 128, 128, gate, torch.bfloat16, "cuda", seed=2, mild=mild)
    S = 9
    idx = torch.tensor([0, 8, -1, 3, 5, 1, 6], dtype=torch.int32, device="cuda")
    pool = torch.full((S, 4, 128, 128), POISON, device="cuda")
    for s in idx.tolist():
        if s >= 0:
            pool[s] = torch.randn(4, 128, 128, device="cuda") * 0.1
    before = bits(pool)
    h0_ref = torch.stack([pool[i] if i >= 0 else torch.zeros_like(pool[0]) for i in idx.tolist()])
    o = run(inp, gate=gate, scale=128**-0.5, cu_seqlens=cu, h0=pool, h0_indices=idx, ht=pool, ht_indices=idx,
            state_v_first=True, pipeline_config={"segments": segments})
    ro, rs = reference(inp, gate=gate, scale=128**-0.5, cu_seqlens=cu, h0=h0_ref, state_v_first=True)
    assert finite(o)
    assert rel_err(o, ro) < 3e-3
    after = bits(pool)
    for s in range(S):
        if s in idx.tolist() and s >= 0:
            assert rel_err(pool[s], rs[idx.tolist().index(s)]) < 3e-3
        else:
            assert torch.equal(after[s], before[s])


@pytest.mark.gpu
def test_gpu_cuda_graph_capture_replay():
    inp = _gpu_inputs("softplus", False, T=1024, H=2, HV=4)
    lens = [100, 0, 500, 424]
    cu = torch.tensor([0] + list(torch.tensor(lens).cumsum(0)), dtype=torch.int32, device="cuda")
    ht = torch.zeros(4, 4, 128, 128, device="cuda")
    out = torch.empty(1, 1024, 4, 128, dtype=torch.bfloat16, device="cuda")
    run(inp, gate="softplus", scale=0.1, cu_seqlens=cu, ht=ht, out=out)  # warm up (JIT)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        run(inp, gate="softplus", scale=0.1, cu_seqlens=cu, ht=ht, out=out)
    # new values (same shapes, new lengths) replayed through the graph
    fresh = _gpu_inputs("softplus", False, T=1024, H=2, HV=4, seed=9)
    for name in ("q", "k", "v", "g", "beta"):
        inp[name].copy_(fresh[name])
    cu.copy_(torch.tensor([0, 300, 300, 1000, 1024], dtype=torch.int32, device="cuda"))
    out.fill_(POISON)
    graph.replay()
    torch.cuda.synchronize()
    ro, rs = reference(inp, gate="softplus", scale=0.1, cu_seqlens=cu)
    assert rel_err(out, ro) < 3e-3 and rel_err(ht, rs) < 3e-3


@pytest.mark.gpu
@pytest.mark.parametrize("n_parts", [1, 4])
def test_gpu_two_streams_concurrently(n_parts):
    """Two streams running different problems at once get separate workspaces (and, in parts,
    separate forked streams and carries)."""
    a = _gpu_inputs("none", True, T=2048, H=2, HV=2, seed=1)
    b = _gpu_inputs("lower_bound", True, T=2048, H=2, HV=2, seed=2)
    ra, _ = reference(a, gate="none", scale=0.1)
    rb, _ = reference(b, gate="lower_bound", scale=0.1)
    s1, s2 = torch.cuda.Stream(), torch.cuda.Stream()
    torch.cuda.synchronize()
    for _ in range(3):
        with torch.cuda.stream(s1):
            oa = run(a, gate="none", scale=0.1, pipeline_config=_parts(n_parts))
        with torch.cuda.stream(s2):
            ob = run(b, gate="lower_bound", scale=0.1, pipeline_config=_parts(n_parts))
    torch.cuda.synchronize()
    assert rel_err(oa, ra) < 3e-3 and rel_err(ob, rb) < 3e-3


@pytest.mark.gpu
def test_gpu_graphs_whose_chain_counters_were_made_in_a_capture_replay_in_any_order():
    """The chain counters of pipelined parts first allocated inside a capture (a fresh capture
    stream) are zeroed only by that graph; a second graph captured after it zeroes them too, so it
    may replay first. Both give the bits of one part."""
    from kimiops import empty_cache

    lens = [3000, 1100]
    cu = torch.tensor([0] + list(torch.tensor(lens).cumsum(0)), dtype=torch.int32, device="cuda")
    inp = _gpu_inputs("softplus", False, T=int(cu[-1]), H=2, HV=4, seed=5)
    five = dict(_parts(5), pdl=True)

    def call(cfg, out):
        return run(inp, gate="softplus", scale=0.1, cu_seqlens=cu, out=out, pipeline_config=cfg,
                   state_config=STATE_CONFIG_WIDE)

    want = torch.empty_like(inp["v"])
    call(_parts(1), want)
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        call(five, torch.empty_like(inp["v"]))  # compile outside any capture, on another stream
    torch.cuda.synchronize()
    empty_cache()
    outs = [torch.full_like(inp["v"], POISON) for _ in range(2)]
    graphs = [torch.cuda.CUDAGraph() for _ in range(2)]
    for graph, out in zip(graphs, outs):
        with torch.cuda.graph(graph):
            call(five, out)
    for i in (1, 0, 1):
        outs[i].fill_(POISON)
        graphs[i].replay()
        torch.cuda.synchronize()
        assert torch.equal(outs[i], want), i
    empty_cache()


@pytest.mark.gpu
@pytest.mark.parametrize("pdl", [True, False], ids=["pdl_chain", "forked_stream"])
def test_gpu_pipelined_parts_bit_identical_eager_and_graph(pdl):
    """Parts chained by programmatic dependent launch or on a forked stream (eager, and replayed
    twice from a CUDA graph: the chain's completion counters return to zero) give the bits of one
    part at the same state tiling (the wide one, which parted calls take), and the pool slots not
    named stay poisoned."""
    lens = [1000, 0, 37, 2048, 64, 947]
    cu = torch.tensor([0] + list(torch.tensor(lens).cumsum(0)), dtype=torch.int32, device="cuda")
    inp = _gpu_inputs("softplus", False, T=int(cu[-1]), H=2, HV=4, seed=3)
    idx = torch.tensor([3, 0, 7, -1, 5, 1], dtype=torch.int32, device="cuda")
    init = torch.randn(9, 4, 128, 128, device="cuda")
    for s in (2, 4, 6, 8):  # slots no sequence names
        init[s] = POISON

    def call(cfg, pool, out):
        return run(inp, gate="softplus", scale=0.1, cu_seqlens=cu, h0=pool, h0_indices=idx, ht=pool, ht_indices=idx,
                   out=out, pipeline_config=cfg, state_config=STATE_CONFIG_WIDE)

    results = {}
    five = dict(_parts(5), pdl=pdl)
    for name, cfg in (("one", _parts(1)), ("default", {"pdl": pdl}), ("five", five)):
        pool, out = init.clone(), torch.empty_like(inp["v"])
        call(cfg, pool, out)
        results[name] = (out, bits(pool))
    pool, out = init.clone(), torch.empty_like(inp["v"])
    call(five, pool.clone(), out)  # warm-up (JIT) outside the capture
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        call(five, pool, out)
    for replay in ("graph", "graph again"):
        pool.copy_(init)
        out.fill_(POISON)
        graph.replay()
        torch.cuda.synchronize()
        results[replay] = (out.clone(), bits(pool))
    for name in ("default", "five", "graph", "graph again"):
        assert torch.equal(results[name][0], results["one"][0]), name
        assert torch.equal(results[name][1], results["one"][1]), name
    ro, rs = reference(inp, gate="softplus", scale=0.1, cu_seqlens=cu,
                       h0=torch.stack([init[i] if i >= 0 else torch.zeros_like(init[0]) for i in idx.tolist()]))
    assert rel_err(results["one"][0], ro) < 3e-3


@pytest.mark.gpu
def test_gpu_fast_launch_bit_identical_and_keyed_on_alignment():
    """Launches through ``kimiops.launch`` (raw addresses after the first call of a specialization)
    give the bits of Triton's own path, and a q that is not 16-byte aligned gets its own
    specialization instead of the aligned kernel (same result, no misaligned access)."""
    import kimiops.launch as fast

    inp = _gpu_inputs("softplus", False, T=1000, H=2, HV=4, seed=5)
    outs = {}
    saved = fast.FAST_LAUNCH
    try:
        for name, on in (("triton", False), ("first", True), ("fast", True)):
            fast.FAST_LAUNCH = on
            ht = torch.full((1, 4, 128, 128), POISON, device="cuda")
            o = run(inp, gate="softplus", scale=0.1, ht=ht)
            outs[name] = (bits(o), bits(ht))
        q = inp["q"]
        buf = torch.empty(q.numel() + 1, dtype=q.dtype, device="cuda")
        shifted = buf[1:].view(q.shape)  # data_ptr % 16 == 2
        shifted.copy_(q)
        assert shifted.data_ptr() % 16 != 0
        ht = torch.full((1, 4, 128, 128), POISON, device="cuda")
        o = run(dict(inp, q=shifted), gate="softplus", scale=0.1, ht=ht)
        torch.cuda.synchronize()
        outs["misaligned q"] = (bits(o), bits(ht))
    finally:
        fast.FAST_LAUNCH = saved
    for name in ("first", "fast", "misaligned q"):
        assert torch.equal(outs[name][0], outs["triton"][0]), name
        assert torch.equal(outs[name][1], outs["triton"][1]), name


def _count_replays(monkeypatch, cls) -> list:
    """A list that gets, for each call of ``cls`` (a recorded prefill's replay), whether it replayed
    (``True``) or declined."""
    replays = []
    replay = cls.__call__

    def counted(self, *args):
        out = replay(self, *args)
        replays.append(out is not None)
        return out

    monkeypatch.setattr(cls, "__call__", counted)
    return replays


@pytest.mark.gpu
@pytest.mark.parametrize("case", ["pool_varlen", "state_out", "b1_parts", "b1_segments", "b2_state_out"])
def test_gpu_repeated_eager_prefill_calls_match_the_full_path(monkeypatch, case):
    """The eager prefill shortcut (varlen calls and one sequence of fixed length: ``runner._elastic``
    with ``chunk.ElasticPrefill``; fixed-length batches: ``runner._eager`` with
    ``chunk.BoundPrefill``): calls repeating a signature replay the recorded launches with the new
    tensors, and give the full path's bits (debug mode never takes the shortcut) for new values,
    pools with a padded slot, final states, pipelined parts (B1 T4096 with segments off: parts
    chained by PDL), segments (B1 T4096 at 4 heads, the rule's choice) and a batch of two; earlier
    outputs are never overwritten."""
    import kimiops
    from kimiops.kda import runner
    from kimiops.kda.kernels import chunk

    # varlen calls and single sequences are kept as elastic entries (any token count), batches of
    # fixed length as exact ones
    elastic = case != "b2_state_out"
    replays = _count_replays(monkeypatch, chunk.ElasticPrefill if elastic else chunk.BoundPrefill)
    kept_as = runner._elastic if elastic else runner._eager
    if case == "b1_parts":
        monkeypatch.setitem(chunk.PIPELINE_CONFIG, "segments", 1)
    gen = torch.Generator(device="cuda").manual_seed(11)
    H, D = 4, 128
    T = 4096 if case.startswith("b1") else 200
    cu = torch.tensor([0, 60, 60, 200], dtype=torch.int32, device="cuda") if case == "pool_varlen" else None
    B = 2 if case == "b2_state_out" else 1
    N = 3 if cu is not None else B
    A_log = torch.log(torch.rand(H, device="cuda", generator=gen) * 15 + 1)
    dt = torch.randn(H * D, device="cuda", generator=gen) * 0.5

    def inputs():
        q, k, v, g = (torch.randn(B, T, H, D, device="cuda", generator=gen, dtype=torch.bfloat16) for _ in range(4))
        beta = torch.randn(B, T, H, device="cuda", generator=gen, dtype=torch.bfloat16)
        return q, k, v, g, beta

    def call(x, state):
        kw = dict(use_qk_l2norm_in_kernel=True, use_gate_in_kernel=True, use_beta_sigmoid_in_kernel=True,
                  A_log=A_log, dt_bias=dt, cu_seqlens=cu)
        if case == "pool_varlen":
            idx = torch.tensor([2, -1, 0], dtype=torch.int32, device="cuda")
            return kimiops.chunk_kda(*x, initial_state=state, initial_state_indices=idx, output_final_state=True,
                                     state_v_first=True, **kw)
        return kimiops.chunk_kda(*x, initial_state=state, output_final_state=True, **kw)

    runner.forget_eager()
    state0 = torch.randn(3 if case == "pool_varlen" else N, H, D, D, device="cuda", generator=gen) * 0.1
    kept = []
    for _ in range(3):
        x = inputs()
        fast_state, full_state = state0.clone(), state0.clone()
        o_fast, s_fast = call(x, fast_state)
        monkeypatch.setenv("KIMIOPS_DEBUG", "1")
        o_full, s_full = call(x, full_state)
        monkeypatch.delenv("KIMIOPS_DEBUG")
        assert torch.equal(o_fast, o_full) and torch.equal(s_fast, s_full)
        assert torch.equal(fast_state, full_state)
        kept.append((o_fast, o_full.clone()))
    assert all(torch.equal(a, b) for a, b in kept)
    assert sum(len(e) for e in kept_as.values()) == 1
    assert sum(len(e) for e in (runner._eager if elastic else runner._elastic).values()) == 0
    assert replays == [True]  # the first call is noted, the second recorded, the third replayed
    # q at an address that is not 16-byte aligned (same shape and strides): another key, whose second
    # call records and whose third replays; all give the full path's bits for the same misaligned q.
    # (Not compared with the aligned q's bits: Triton compiles another kernel for it, whose layouts
    # may sum in another order.)
    x = inputs()
    buf = torch.empty(x[0].numel() + 1, device="cuda", dtype=torch.bfloat16)
    q_odd = buf[1:].view(x[0].shape)
    q_odd.copy_(x[0])
    x_odd = (q_odd, *x[1:])
    fast = []
    for _ in range(3):
        fast_state = state0.clone()
        fast.append((call(x_odd, fast_state)[0], fast_state))
    monkeypatch.setenv("KIMIOPS_DEBUG", "1")
    full_state = state0.clone()
    o_full, _ = call(x_odd, full_state)
    monkeypatch.delenv("KIMIOPS_DEBUG")
    for o_fast, fast_state in fast:
        assert torch.equal(o_fast, o_full) and torch.equal(fast_state, full_state)
    assert sum(len(e) for e in kept_as.values()) == 2
    assert replays == [True, True]


@pytest.mark.gpu
@pytest.mark.parametrize("state", ["pool", "dense", "none"])
def test_gpu_eager_varlen_prefill_with_new_token_counts_gives_the_full_path_bits(monkeypatch, state):
    """Varlen prefill calls whose token count and sequence count change from call to call (how
    engines run extend) replay one recording (``runner._elastic`` with ``chunk.ElasticPrefill``):
    each gives the full path's bits (debug mode never takes a shortcut) for o and the states, with
    T divisible by 16 or not, N of 1 to 5, a sequence of zero tokens and a padded slot; a call
    needing more scratch than the recording holds, or a layout it does not cover (one long
    sequence in segments at 4 heads), runs the full path and still matches."""
    import kimiops
    from kimiops.kda import runner
    from kimiops.kda.kernels import chunk

    replays = _count_replays(monkeypatch, chunk.ElasticPrefill)
    gen = torch.Generator(device="cuda").manual_seed(12)
    H, HV, D = 2, 4, 128
    A_log = torch.log(torch.rand(HV, device="cuda", generator=gen) * 15 + 1)
    dt = torch.randn(HV * D, device="cuda", generator=gen) * 0.5
    pool0 = torch.randn(6, HV, D, D, device="cuda", generator=gen) * 0.1
    batches = [[100, 37], [64, 0, 90], [7], [160, 96], [5, 200, 31, 9, 2], [48], [80, 80], [3000], [700, 650, 11]]

    def call(lens, x, st):
        cu = torch.tensor([0, *torch.tensor(lens).cumsum(0).tolist()], dtype=torch.int32, device="cuda")
        kw = dict(use_qk_l2norm_in_kernel=True, use_gate_in_kernel=True, use_beta_sigmoid_in_kernel=True,
                  A_log=A_log, dt_bias=dt, cu_seqlens=cu, state_v_first=True)
        if state == "pool":
            idx = torch.tensor([5, -1, 0, 3, 1][:len(lens)], dtype=torch.int32, device="cuda")
            return kimiops.chunk_kda(*x, initial_state=st, initial_state_indices=idx, output_final_state=True, **kw)
        return kimiops.chunk_kda(*x, initial_state=st, output_final_state=state == "dense", **kw)

    kimiops.empty_cache()  # scratch of earlier tests would hold every batch below
    for lens in batches:
        T = sum(lens)
        x = tuple(torch.randn(1, T, heads, D, device="cuda", generator=gen, dtype=torch.bfloat16)
                  for heads in (H, H, HV, HV))
        x = (x[0], x[1], x[2], x[3], torch.randn(1, T, HV, device="cuda", generator=gen, dtype=torch.bfloat16))
        st0 = (pool0 if state == "pool" else torch.randn(len(lens), HV, D, D, device="cuda", generator=gen) * 0.1
               if state == "dense" else None)
        fast_st, full_st = (None, None) if st0 is None else (st0.clone(), st0.clone())
        o_fast, s_fast = call(lens, x, fast_st)
        monkeypatch.setenv("KIMIOPS_DEBUG", "1")
        o_full, s_full = call(lens, x, full_st)
        monkeypatch.delenv("KIMIOPS_DEBUG")
        assert torch.equal(o_fast, o_full), lens
        if st0 is not None:
            assert torch.equal(fast_st, full_st), lens
        if state == "dense":
            assert torch.equal(s_fast, s_full), lens
    # one entry per layout (one sequence: no longest-first order; several: ordered; segments)
    assert sum(len(e) for e in runner._elastic.values()) == 3
    # the first call is noted, the second recorded; later calls replay where their kernel variant
    # was seen ([80, 80] repeats the variant of [160, 96]); the 3000-token prompt (segments at 4
    # heads) is recorded as an entry of its own, the last batch (more slots than the recording's
    # scratch) declines
    assert True in replays and replays[-1] is False, replays


@pytest.mark.gpu
@pytest.mark.parametrize("heads, track", [(32, False), (4, False), (32, True), (4, True)])
def test_gpu_eager_prefill_in_parts_or_segments_with_new_token_counts_gives_the_full_path_bits(monkeypatch, heads,
                                                                                              track):
    """One long prompt with a new token count every call (one request's extend) at 32 heads runs
    in 2-8 pipelined parts, at 4 heads (a tensor-parallel rank) in segments, also two prompts;
    ``chunk.ElasticPrefill`` repeats these layouts with the part bounds, chain counters and segment
    lengths of each call. Every call gives the full path's bits (debug mode never takes a shortcut)
    for o and the pool, and with ``track`` for the state snapshots (SGLang's prefix cache: one
    sequence's snapshot inside it, the other's none), and most calls replay."""
    import kimiops
    from kimiops.kda.kernels import chunk
    from kimiops.kda.track import TRACK_CHUNK

    replays = _count_replays(monkeypatch, chunk.ElasticPrefill)
    gen = torch.Generator(device="cuda").manual_seed(13)
    HV, D = heads, 128
    A_log = torch.log(torch.rand(HV, device="cuda", generator=gen) * 15 + 1)
    dt = torch.randn(HV * D, device="cuda", generator=gen) * 0.5
    pool0 = torch.randn(4, HV, D, D, device="cuda", generator=gen) * 0.1
    if heads == 32:  # parts: 2 (1024 tokens) to 8 (33000)
        batches = [[33000], [1024], [1100], [2048], [3001], [4096], [1500], [8192], [12345], [2222], [1024]]
    else:
        batches = [[16384], [2048], [3000], [4096], [5000, 100], [8192], [9001], [2500, 2501], [2049], [3000]]
    layouts = set()
    kimiops.empty_cache()
    for lens in batches:
        T = sum(lens)
        layouts.add(chunk.elastic_layout(T, len(lens), HV, D)[0][0])
        cu = torch.tensor([0, *torch.tensor(lens).cumsum(0).tolist()], dtype=torch.int32, device="cuda")
        idx = torch.tensor([2, 0][:len(lens)], dtype=torch.int32, device="cuda")
        x = [torch.randn(1, T, HV, D, device="cuda", generator=gen, dtype=torch.bfloat16) for _ in range(4)]
        beta = torch.randn(1, T, HV, device="cuda", generator=gen, dtype=torch.bfloat16)
        kw = dict(use_qk_l2norm_in_kernel=True, use_gate_in_kernel=True, use_beta_sigmoid_in_kernel=True,
                  A_log=A_log, dt_bias=dt, cu_seqlens=cu, state_v_first=True, initial_state_indices=idx,
                  output_final_state=True)
        fast, full = pool0.clone(), pool0.clone()
        snaps = [{}, {}]  # the fast call's and the full path's
        if track:
            chunks = torch.tensor([lens[0] // TRACK_CHUNK // 2, -1][:len(lens)], dtype=torch.int32, device="cuda")
            snaps = [dict(track_state=torch.full((len(lens), HV, D, D), float("nan"), device="cuda"),
                          track_chunk_idx=chunks) for _ in range(2)]
        o_fast, _ = kimiops.chunk_kda(*x, beta, initial_state=fast, **kw, **snaps[0])
        monkeypatch.setenv("KIMIOPS_DEBUG", "1")
        o_full, _ = kimiops.chunk_kda(*x, beta, initial_state=full, **kw, **snaps[1])
        monkeypatch.delenv("KIMIOPS_DEBUG")
        assert torch.equal(o_fast, o_full), lens
        assert torch.equal(fast, full), lens
        if track:  # NaN rows of sequences without a snapshot are left as they are in both
            assert torch.equal(snaps[0]["track_state"][0], snaps[1]["track_state"][0]), lens
            assert not snaps[0]["track_state"][0].isnan().any(), lens
    assert layouts == {"parts" if heads == 32 else "segments"}
    assert sum(replays) >= 4, replays


def test_every_scratch_buffer_is_known_to_the_eager_shortcut():
    """Every tensor ``_plan`` allocates is in ``_SCRATCH_KEYS``: ``BoundPrefill.build`` declines a
    launch that passes any other tensor, so a missing key would silently turn the shortcut off."""
    inp = make_inputs(1, 200, 2, 2, 32, 32, "softplus", torch.float32, "cpu", seed=3)
    call = {"q", "k", "v", "g", "beta", "o", "cu", "h0", "h0_indices", "ht", "ht_indices", "A_log", "dt_bias"}
    for pipeline in ({"min_parts": 2, "max_parts": 2, "min_part_slots": 1, "below_pairs": 1 << 30, "segments": 1},
                     {"segments": 3}):
        plan = plan_for(inp, ht=torch.empty(1, 2, 32, 32), pipeline_config=pipeline)
        allocated = {key for key, val in plan.items() if isinstance(val, torch.Tensor)} - call
        assert allocated and allocated <= set(_SCRATCH_KEYS)
