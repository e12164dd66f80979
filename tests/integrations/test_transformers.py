"""kimiops.integrations.transformers: routing transformers' Kimi-Linear KDA to kimiops.

CPU tests run a tiny random Kimi-Linear in fp32 (kimiops' torch path against transformers' torch
fallback); the ``gpu`` tests run a larger model in bf16 through the Triton kernels. The trained-model tests first
train the model briefly on a synthetic language, so that its logits are confident like a real checkpoint's.
"""

import copy
import inspect
import math
import os
import subprocess
import sys

import pytest
import torch

transformers = pytest.importorskip("transformers")

import kimiops  # noqa: E402
import kimiops.integrations.transformers as kt  # noqa: E402
from kimiops.testing import rel_err  # noqa: E402


def import_modeling_with_torch_fallback():
    """transformers' Kimi-Linear modeling module, imported with flash-linear-attention hidden.

    transformers wraps its KDA functions in ``use_kernel_func_from_hub_with_fallback(..., "fla")``,
    which binds FLA's Triton kernels, once at import, wherever ``fla`` imports (on the GPU machines,
    where FLA is the benchmarks' comparator). The tests here compare kimiops with transformers' own
    torch path, so ``fla`` is hidden while the module is first imported (a module imported before
    keeps what it bound). FLA's kernels also took minutes to compile there, which stopped the GPU
    tests at their time limit (benchmarks/results/logs_h200_20261202b, run 1)."""
    hidden = {n: m for n, m in sys.modules.items() if n == "fla" or n.startswith("fla.")}
    for n in hidden:
        del sys.modules[n]
    sys.modules["fla"] = None  # import fla -> ImportError
    try:
        from transformers.models.kimi_linear import modeling_kimi_linear
    finally:
        del sys.modules["fla"]
        sys.modules.update(hidden)
    return modeling_kimi_linear


try:
    M = import_modeling_with_torch_fallback()
    from transformers import KimiLinearConfig, KimiLinearForCausalLM
except ImportError:  # pragma: no cover
    pytest.skip(f"transformers {transformers.__version__} has no Kimi-Linear", allow_module_level=True)


def tiny_config(**overrides) -> "KimiLinearConfig":
    """3 layers (KDA, MLA full attention, KDA), hidden 64, 4 KDA heads of dim 16, a 4-expert MoE."""
    kw = dict(
        vocab_size=128, hidden_size=64, intermediate_size=128, moe_intermediate_size=32, num_hidden_layers=3,
        num_attention_heads=4, num_key_value_heads=4, kv_lora_rank=32, q_lora_rank=None, qk_rope_head_dim=8,
        qk_nope_head_dim=16, v_head_dim=16, linear_head_dim=16, linear_num_heads=4,
        layer_types=["linear_attention", "full_attention", "linear_attention"],
        mlp_layer_types=["dense", "sparse", "dense"], num_local_experts=4, num_experts_per_tok=2, n_group=1,
        topk_group=1, pad_token_id=0, bos_token_id=1, eos_token_id=2,
    )
    kw.update(overrides)
    return KimiLinearConfig(**kw)


def make_model(seed=0, strong_gates=False, **overrides):
    torch.manual_seed(seed)
    model = KimiLinearForCausalLM(tiny_config(**overrides)).eval()
    if strong_gates:  # Kimi-Linear-like decay rates exp(A_log) up to ~200: large per-step |g|
        with torch.no_grad():
            for layer in model.modules():
                if isinstance(layer, M.KimiLinearForgetGate):
                    layer.A_log.copy_(torch.linspace(math.log(2.0), math.log(200.0), layer.A_log.numel())
                                      .view_as(layer.A_log))
                    layer.dt_bias.add_(3.0)
    return model


class Spy:
    """Counts calls of kimiops' public KDA functions (the routers look them up per call)."""

    def __init__(self, monkeypatch):
        self.calls = {"chunk_kda": 0, "fused_recurrent_kda": 0, "kda_gate": 0}
        for name in self.calls:
            real = getattr(kimiops, name)

            def spy(*a, _real=real, _name=name, **k):
                self.calls[_name] += 1
                return _real(*a, **k)

            monkeypatch.setattr(kimiops, name, spy)

    def total(self):
        return sum(self.calls.values())


@pytest.fixture(autouse=True)
def _always_disable():
    kt.disable()
    yield
    kt.disable()


@pytest.fixture
def spy(monkeypatch):
    return Spy(monkeypatch)


def originals():
    return (M.chunk_kimi_delta_attention, M.recurrent_kimi_delta_attention, M.KimiLinearForgetGate.forward)


def greedy(model, ids, steps):
    with torch.no_grad():
        out = model.generate(ids, max_new_tokens=steps, min_new_tokens=steps, do_sample=False,
                             attention_mask=torch.ones_like(ids))
    return out[:, ids.shape[1]:]


def cache_name(model) -> str:
    """The cache argument of ``model.forward``: transformers 5.24 names it ``cache``, 5.17 ``past_key_values``."""
    return "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"


def lockstep_decode(model_k, model_f, ids, steps):
    """Greedy decode of ``model_k`` (kimiops) and ``model_f`` (transformers' fallback) side by side, each through
    its own cache, feeding both the SAME token at every step: ``model_f``'s argmax. The two runs cannot drift onto
    different continuations, so every step compares them on identical prefixes.

    Returns ``(seq, logits_k, logits_f)``: ``seq`` [B, T + steps] is ``ids`` followed by the fed tokens;
    ``logits_*`` [B, steps + 1, V] fp32, index 0 from the prefill's last position, index ``i`` from decode step
    ``i`` (one token through the cache). Index ``i`` predicts ``seq[:, T + i]``, as does
    ``model(seq).logits[:, T - 1 + i]``.
    """
    name_k, name_f = cache_name(model_k), cache_name(model_f)
    with torch.no_grad():
        out_k, out_f = model_k(ids, use_cache=True), model_f(ids, use_cache=True)
        logits_k, logits_f, fed = [out_k.logits[:, -1].float()], [out_f.logits[:, -1].float()], []
        for _ in range(steps):
            tok = logits_f[-1].argmax(-1, keepdim=True)
            fed.append(tok)
            out_k = model_k(tok, use_cache=True, **{name_k: getattr(out_k, name_k)})
            out_f = model_f(tok, use_cache=True, **{name_f: getattr(out_f, name_f)})
            logits_k.append(out_k.logits[:, -1].float())
            logits_f.append(out_f.logits[:, -1].float())
    return torch.cat([ids, *fed], 1), torch.stack(logits_k, 1), torch.stack(logits_f, 1)


def check_lockstep(model_k, model_f, model_ref, ids, steps, *, err_floor, max_ties, noise_factor=4.0):
    """Decode ``model_k`` and ``model_f`` in lockstep (:func:`lockstep_decode`) and check kimiops against the
    reference ``model_ref`` (fp32, transformers' code) run once over the final token sequence (teacher forcing).

    - Logits, per step: ``rel_err(kimiops, ref) <= max(1.5 * rel_err(fallback, ref), err_floor)``.
    - Greedy decisions (argmax), per row and step: kimiops must pick the fallback's token unless the decision is a
      tie at the runs' precision, i.e. the reference's logit gap between the two candidate tokens is below
      ``tau = noise_factor * max |logits_f - ref|`` over that row (the fallback's measured noise; with
      ``noise_factor`` 4 a flip needs a gap the fallback's own error, or a kimiops error up to twice it, can close).
      At most ``max_ties`` such tie flips are allowed.

    Returns a one-line summary (tie flips, tau, worst per-step error ratio) for the test to print.
    """
    T = ids.shape[1]
    seq, logits_k, logits_f = lockstep_decode(model_k, model_f, ids, steps)
    with torch.no_grad():
        ref = model_ref(seq).logits[:, T - 1:].float()
    assert ref.shape == logits_k.shape == logits_f.shape

    ratios = []
    for i in range(steps + 1):
        err_k, err_f = rel_err(logits_k[:, i], ref[:, i]), rel_err(logits_f[:, i], ref[:, i])
        assert err_k <= max(1.5 * err_f, err_floor), (
            f"step {i}: kimiops logits rel err {err_k:.3e}, fallback {err_f:.3e} (floor {err_floor:.0e})")
        ratios.append(err_k / max(err_f, 1e-30))

    tok_k, tok_f = logits_k.argmax(-1), logits_f.argmax(-1)
    assert torch.equal(tok_f[:, :steps], seq[:, T:])  # the fed tokens are the fallback's choices
    tau = noise_factor * (logits_f - ref).abs().amax(dim=(1, 2))  # [B]
    gap = (ref.gather(-1, tok_k[..., None]) - ref.gather(-1, tok_f[..., None])).squeeze(-1).abs()
    flip = tok_k != tok_f
    tie = gap < tau[:, None]
    for row, i in (flip & ~tie).nonzero().tolist():
        pytest.fail(f"greedy decision differs at row {row} step {i} and is no tie: kimiops {tok_k[row, i].item()} vs "
                    f"fallback {tok_f[row, i].item()}, fp32 logit gap {gap[row, i].item():.3e} >= tau "
                    f"{tau[row].item():.3e}")
    top2 = ref.topk(2, dim=-1).values
    near = (top2[..., 0] - top2[..., 1]) < tau[:, None]  # decisions that are near-ties in fp32, flipped or not
    n_ties, n = int((flip & tie).sum()), flip.numel()
    summary = (f"{n_ties} of {n} greedy decisions flipped at a tie (fp32 gap < tau = "
               f"{', '.join(f'{t:.2e}' for t in tau.tolist())} per row); {int(near.sum())} of {n} have an fp32 "
               f"top-2 gap < tau; the fallback's own argmax differs from fp32's at "
               f"{int((tok_f != ref.argmax(-1)).sum())}; "
               f"max per-step logits error ratio kimiops/fallback {max(ratios):.2f}")
    assert n_ties <= max_ties, summary
    return summary


# --------------------------------------------------------------------------- import hygiene
def test_importing_kimiops_does_not_import_transformers():
    code = ("import sys, kimiops, kimiops.integrations, kimiops.integrations.transformers; "
            "sys.exit(1 if 'transformers' in sys.modules else 0)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr or "importing kimiops imported transformers"


_FAKE_FLA_KDA = """
def chunk_kda(*args, **kwargs):
    raise RuntimeError("fake fla called")


fused_recurrent_kda = chunk_kda
"""

_CALL_CHUNK = """
import torch
q = k = v = g = torch.zeros(1, 64, 2, 16)
beta = torch.zeros(1, 64, 2)
try:
    M.chunk_kimi_delta_attention(q, k, v, g, beta)
    print("torch path")
except RuntimeError as e:
    print(e)
"""


def test_fallback_is_transformers_torch_path_even_with_fla_importable(tmp_path):
    """With an importable ``fla`` (a stand-in whose KDA functions raise), a plain import of the modeling
    module binds it as the fallback; the import these tests use keeps transformers' torch path."""
    pkg = tmp_path / "fla" / "ops" / "kda"
    pkg.mkdir(parents=True)
    for d in (tmp_path / "fla", tmp_path / "fla" / "ops"):
        (d / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text(_FAKE_FLA_KDA)
    inherited = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    path = [str(tmp_path), os.path.dirname(__file__)] + inherited
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(path))  # the stand-in first, ahead of any real fla
    plain = "from transformers.models.kimi_linear import modeling_kimi_linear as M\n" + _CALL_CHUNK
    guarded = ("import fla, test_transformers\nM = test_transformers.M\n"
               "assert sys.modules['fla'] is fla  # restored after the import\n" + _CALL_CHUNK)
    outs = [subprocess.run([sys.executable, "-c", "import sys\n" + code], capture_output=True, text=True, env=env)
            for code in (plain, guarded)]
    assert [r.stdout.strip() for r in outs] == ["fake fla called", "torch path"], [r.stderr[-2000:] for r in outs]


# --------------------------------------------------------------------------- numerics
@pytest.mark.parametrize("strong_gates", [False, True])
def test_logits_match_fallback(spy, strong_gates):
    model = make_model(strong_gates=strong_gates)
    ids = torch.randint(3, 128, (2, 150), generator=torch.Generator().manual_seed(1))  # 3 chunks, ragged
    with torch.no_grad():
        ref = model(ids).logits
        assert spy.total() == 0
        kt.enable()
        out = model(ids).logits
    assert spy.calls["chunk_kda"] == 2 and spy.calls["kda_gate"] == 2  # both KDA layers routed
    assert out.dtype == ref.dtype == torch.float32
    assert rel_err(out, ref) <= 1e-5


def test_greedy_generation_identical(spy):
    model = make_model(seed=3)
    ids = torch.randint(3, 128, (2, 70), generator=torch.Generator().manual_seed(2))
    ref = greedy(model, ids, 16)
    kt.enable(model)
    out = greedy(model, ids, 16)
    assert spy.calls["chunk_kda"] == 2          # prefill of 2 KDA layers
    assert spy.calls["fused_recurrent_kda"] == 2 * 15  # every decode step after the prefill
    assert torch.equal(out, ref)


def test_lockstep_decode_fp32(spy):
    """The lockstep check the GPU test uses, on CPU in fp32: kimiops (torch path) against transformers' fallback,
    32 decode steps through the cache; at fp32 noise no greedy decision may differ, tie or not."""
    model_f = make_model(seed=3)
    model_k = kt.enable(copy.deepcopy(model_f))
    ids = torch.randint(3, 128, (2, 70), generator=torch.Generator().manual_seed(2))
    summary = check_lockstep(model_k, model_f, model_f, ids, 32, err_floor=1e-5, max_ties=0)
    print(summary)
    assert spy.calls["chunk_kda"] == 2 and spy.calls["fused_recurrent_kda"] == 2 * 32  # model_k only


def test_cache_prefill_then_decode_matches_full_forward():
    """Prefill + decode through the cache with kimiops gives the logits of one full forward pass."""
    model = make_model(seed=4)
    ids = torch.randint(3, 128, (1, 40), generator=torch.Generator().manual_seed(3))
    kt.enable(model)
    with torch.no_grad():
        full = model(ids).logits
        name = cache_name(model)
        out = model(ids[:, :37], use_cache=True)
        steps = [out.logits]
        for t in range(37, 40):
            out = model(ids[:, t:t + 1], use_cache=True, **{name: getattr(out, name)})
            steps.append(out.logits)
    assert rel_err(torch.cat(steps, 1), full) <= 1e-5


@pytest.mark.skipif(os.environ.get("TRITON_INTERPRET") != "1", reason="CPU run of the Triton kernels (interpreter)")
def test_triton_backend_in_interpreter(spy):
    """The routed calls reach the Triton kernels (interpreted on CPU, fp32 with tf32-like dots: looser bound)."""
    model = make_model(seed=7)
    ids = torch.randint(3, 128, (1, 80), generator=torch.Generator().manual_seed(6))
    with torch.no_grad():
        ref = model(ids).logits
        kt.enable(model, backend="triton")
        out = model(ids).logits
    assert spy.calls["chunk_kda"] == 2
    assert rel_err(out, ref) <= 1e-3


# --------------------------------------------------------------------------- argument conventions
def _kda_inputs(dtype, B=2, T=70, H=3, K=16, V=32, seed=0):
    gen = torch.Generator().manual_seed(seed)
    # q/k/v as transformers builds them: views into one [B, T, 3*H*K] tensor (non-contiguous per head)
    qkv = torch.randn(B, 3 * H * K, T, generator=gen).transpose(1, 2)
    q, k = (x.view(B, T, H, K) for x in qkv[..., : 2 * H * K].split(H * K, -1))
    assert T == 1 or q.stride(-1) != 1
    v = torch.randn(B, T, H, V, generator=gen)
    g = -torch.rand(B, T, H, K, generator=gen) * 2  # fp32 log decay, as from the forget gate
    beta = torch.rand(B, T, H, generator=gen)
    h0 = torch.randn(B, H, K, V, generator=gen)
    return [x.to(dtype) for x in (q, k, v)] + [g, beta.to(dtype), h0]


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("fname", ["chunk_kimi_delta_attention", "recurrent_kimi_delta_attention"])
def test_functions_follow_transformers_conventions(spy, dtype, fname):
    orig = getattr(M, fname)
    q, k, v, g, beta, h0 = _kda_inputs(dtype, T=70 if fname.startswith("chunk") else 1)
    kw = dict(g=g, beta=beta, initial_state=h0, use_qk_l2norm_in_kernel=True)
    o_ref, s_ref = orig(q, k, v, output_final_state=True, **kw)
    kt.enable()
    routed = getattr(M, fname)
    assert routed is not orig
    o, s = routed(q, k, v, output_final_state=True, unrelated_kwarg=123, **kw)  # unknown kwargs are ignored
    assert spy.total() == 1
    assert o.dtype == o_ref.dtype == dtype and o.shape == o_ref.shape
    assert s.dtype == s_ref.dtype == torch.float32 and s.shape == s_ref.shape == h0.shape
    tol = 1e-5 if dtype == torch.float32 else 1e-2
    assert rel_err(o, o_ref) <= tol and rel_err(s, s_ref) <= 1e-5
    # no final state requested -> None; q/k/v keywords (FLA names) and a bf16 initial state accepted
    kw["initial_state"] = h0.bfloat16()  # transformers casts the state to fp32 (`.to(value)`)
    o2, s2 = routed(q=q, k=k, v=v, output_final_state=False, **kw)
    kt.disable()
    o2_ref, _ = orig(q, k, v, output_final_state=False, **kw)
    assert s2 is None and rel_err(o2, o2_ref) <= tol


def test_positional_arguments_bind_like_transformers(spy):
    q, k, v, g, beta, h0 = _kda_inputs(torch.float32)
    orig = M.chunk_kimi_delta_attention
    ref = orig(q, k, v, g, beta, 64, h0, True, True)  # chunk_size is the 6th positional parameter
    kt.enable()
    out = M.chunk_kimi_delta_attention(q, k, v, g, beta, 64, h0, True, True)
    assert spy.calls["chunk_kda"] == 1
    assert rel_err(out[0], ref[0]) <= 1e-5 and rel_err(out[1], ref[1]) <= 1e-5
    with pytest.raises(TypeError, match="multiple values"):
        M.chunk_kimi_delta_attention(q, k, v, g, beta, query=q)
    with pytest.raises(TypeError, match="missing"):
        M.chunk_kimi_delta_attention(q, k, v, g)


def test_grad_enabled_falls_back_to_transformers(spy):
    q, k, v, g, beta, h0 = _kda_inputs(torch.float32)
    q.requires_grad_(True)
    kt.enable()
    with pytest.warns(RuntimeWarning, match="no backward"):
        o, _ = M.chunk_kimi_delta_attention(q, k, v, g=g, beta=beta, use_qk_l2norm_in_kernel=True)
    assert spy.total() == 0 and o.requires_grad


# --------------------------------------------------------------------------- scope, undo, idempotence
def test_enable_model_affects_only_that_model(spy):
    a, b = make_model(seed=5), make_model(seed=6)
    ids = torch.randint(3, 128, (1, 20), generator=torch.Generator().manual_seed(4))
    with torch.no_grad():
        ref_b = b(ids).logits
        assert kt.enable(a) is a
        assert kt.is_enabled(a) and not kt.is_enabled(b) and not kt.is_enabled()
        out_b = b(ids).logits
        assert spy.total() == 0 and torch.equal(out_b, ref_b)  # b still runs transformers' code, bit for bit
        a(ids)
        assert spy.calls["chunk_kda"] == 2 and spy.calls["kda_gate"] == 2
        # a forget gate or KDA function called outside a's layers is not routed
        gate = next(m for m in b.modules() if isinstance(m, M.KimiLinearForgetGate))
        gate(torch.randn(1, 3, 64))
        assert spy.calls["kda_gate"] == 2


def test_disable_restores_original_objects():
    before = originals()
    model = make_model()
    hooks_before = [(len(m._forward_pre_hooks), len(m._forward_hooks)) for m in model.modules()]
    kt.enable()
    assert all(x is not y for x, y in zip(originals(), before))
    kt.disable()
    assert all(x is y for x, y in zip(originals(), before))
    assert "forward" not in vars(M.KimiLinearForgetGate) or M.KimiLinearForgetGate.forward is before[2]

    kt.enable(model)
    assert all(x is not y for x, y in zip(originals(), before))
    kt.disable(model)
    assert all(x is y for x, y in zip(originals(), before))
    assert [(len(m._forward_pre_hooks), len(m._forward_hooks)) for m in model.modules()] == hooks_before

    # per-model and global together: originals come back only when both are undone
    kt.enable(model)
    kt.enable()
    kt.disable(model)
    assert kt.is_enabled() and originals()[0] is not before[0]
    kt.disable()
    assert all(x is y for x, y in zip(originals(), before)) and not kt.is_enabled(model)


def test_enable_twice_is_idempotent(spy):
    before = originals()
    model = make_model()
    kt.enable()
    routed = originals()
    kt.enable()
    assert originals() == routed  # same routers, not routers of routers
    kt.disable()
    assert all(x is y for x, y in zip(originals(), before))

    kt.enable(model)
    hooks = sum(len(m._forward_pre_hooks) + len(m._forward_hooks) for m in model.modules())
    kt.enable(model)
    assert sum(len(m._forward_pre_hooks) + len(m._forward_hooks) for m in model.modules()) == hooks
    with torch.no_grad():
        model(torch.randint(3, 128, (1, 10)))
    assert spy.calls["chunk_kda"] == 2  # one routed call per KDA layer, not two
    kt.disable(model)
    assert all(x is y for x, y in zip(originals(), before))


def test_context_manager_restores_state():
    before = originals()
    model = make_model()
    with kt.enabled(model, backend="torch"):
        assert kt.is_enabled(model)
    assert not kt.is_enabled(model) and all(x is y for x, y in zip(originals(), before))
    with kt.enabled():
        assert kt.is_enabled()
    assert not kt.is_enabled() and all(x is y for x, y in zip(originals(), before))


def test_backend_is_forwarded(monkeypatch):
    seen = []
    real = kimiops.chunk_kda
    monkeypatch.setattr(kimiops, "chunk_kda", lambda *a, **k: (seen.append(k["backend"]), real(*a, **k))[1])
    model = make_model()
    kt.enable(model, backend="torch")
    with torch.no_grad():
        model(torch.randint(3, 128, (1, 10)))
    assert seen == ["torch", "torch"]


# --------------------------------------------------------------------------- errors
def test_errors():
    with pytest.raises(TypeError, match="nn.Module"):
        kt.enable("model")
    with pytest.raises(ValueError, match="KimiLinearDeltaAttention"):
        kt.enable(torch.nn.Linear(2, 2))
    with pytest.raises(ValueError, match="backend"):
        kt.enable(backend="cuda")
    assert not kt.is_enabled() and originals()[0].__name__ == "chunk_kimi_delta_attention"
    assert not hasattr(originals()[0], "__kimiops_router__")  # a failed enable leaves nothing installed


def test_missing_hooks_name_the_transformers_version(monkeypatch):
    monkeypatch.delattr(M, "recurrent_kimi_delta_attention")
    with pytest.raises(RuntimeError, match=f"transformers {transformers.__version__}.*recurrent_kimi_delta_attention"):
        kt.enable()
    assert not kt.is_enabled()


# --------------------------------------------------------------------------- GPU (bf16, Triton kernels)
def gpu_config():
    """4 layers (3 KDA + 1 MLA), hidden 512, 8 KDA heads of dim 128, dense MLPs."""
    return tiny_config(
        vocab_size=1024, hidden_size=512, intermediate_size=1024, moe_intermediate_size=128, num_hidden_layers=4,
        num_attention_heads=8, num_key_value_heads=8, kv_lora_rank=128, qk_rope_head_dim=32, qk_nope_head_dim=64,
        v_head_dim=64, linear_head_dim=128, linear_num_heads=8,
        layer_types=["linear_attention", "linear_attention", "full_attention", "linear_attention"],
        mlp_layer_types=["dense"] * 4,
    )


@pytest.mark.gpu
def test_gpu_bf16_matches_fp32_fallback_and_greedy_tokens():
    torch.manual_seed(0)
    model32 = KimiLinearForCausalLM(gpu_config()).eval().cuda()

    def bf16_copy():
        model = KimiLinearForCausalLM(gpu_config()).eval()
        model.load_state_dict(model32.state_dict())
        return model.to(device="cuda", dtype=torch.bfloat16)

    model16, fallback16 = bf16_copy(), bf16_copy()  # kimiops (enabled below) and transformers' fallback
    ids = torch.randint(3, 1024, (2, 300), generator=torch.Generator().manual_seed(5)).cuda()

    with torch.no_grad():
        ref32 = model32(ids).logits.float()           # transformers' fallback in fp32: the reference
        fb16 = fallback16(ids).logits.float()         # transformers' fallback in bf16
        kt.enable(model16)
        ko16 = model16(ids).logits.float()            # kimiops (Triton) in bf16
    err_k, err_f = rel_err(ko16, ref32), rel_err(fb16, ref32)
    # bf16 tolerance: no worse than transformers' own bf16 run, with a floor for rounding noise
    assert err_k <= max(1.5 * err_f, 2e-2), f"kimiops bf16 rel err {err_k:.3e}, fallback bf16 {err_f:.3e}"

    # Greedy decoding, 32 steps through the cache, both bf16 runs fed the same tokens. The random-weight model's
    # logits are flat: about 50 of the 66 decisions have an fp32 top-2 gap inside tau (~0.15, four times the
    # fallback's max bf16 error), so a tie can flip the argmax of any bf16 implementation. Flips are allowed only
    # at such ties, and at most 8 (1 in 8). Measured on CPU with this config (Triton kernels in the interpreter;
    # shuffling each step's bf16 errors over the vocabulary to resample where the ties fall): kimiops-vs-fallback
    # tie flips average 3.0 with P(> 2) = 0.60 and P(> 8) = 5e-4; transformers' own bf16 run disagrees with the
    # fp32 argmax 3.5 times on average, P(> 2) = 0.73. A bound of 2 would fail by luck, not by a bug; real errors
    # are caught by the per-step logits bound and by the rule that no non-tie decision may differ.
    print(check_lockstep(model16, fallback16, model32, ids, 32, err_floor=2e-2, max_ties=8))


# --------------------------------------------------------------------------- trained model: confident logits
# A random-weight model's logits are flat, so bf16 noise flips its near-tie argmaxes and free-running greedy tokens
# of two bf16 implementations diverge by luck (see the test above). A model trained briefly on a low-entropy synthetic
# language has the confident logits of a real checkpoint: there, identical greedy tokens are a fair requirement.
def markov_tokens(n, length, *, vocab, seed, p=0.9, device="cpu"):
    """``[n, length]`` int64 samples of a fixed second-order Markov process over tokens ``3 .. vocab-1`` (0-2 are
    pad/bos/eos): with probability ``p`` the next token is ``rule[x[t-2], cls[x[t-1]]]``, else uniform. ``rule``
    ``[vocab, 2]`` and the token classes ``cls`` ``[vocab]`` (one random bit per token) are fixed for a vocabulary;
    ``seed`` picks the samples. Predicting a token needs the two before it (the KDA layers' short convolutions)."""
    proc = torch.Generator().manual_seed(vocab)
    rule = torch.randint(3, vocab, (vocab, 2), generator=proc)
    cls = torch.randint(0, 2, (vocab,), generator=proc)
    gen = torch.Generator().manual_seed(seed)
    x = torch.randint(3, vocab, (n, length), generator=gen)
    follow = torch.rand(n, length, generator=gen) < p
    for t in range(2, length):
        x[:, t] = torch.where(follow[:, t], rule[x[:, t - 2], cls[x[:, t - 1]]], x[:, t])
    return x.to(device)


def trained_model(config, device, *, steps, batch, seq, lr, warmup=10):
    """``KimiLinearForCausalLM(config)`` in fp32 on ``device``, seeded, trained on ``steps`` batches ``[batch, seq]``
    of :func:`markov_tokens` through transformers' own code with autograd (kimiops is not involved: its ops have no
    backward). AdamW (betas 0.9/0.95, no weight decay) at ``lr`` after a linear warmup of ``warmup`` steps, then
    decaying linearly to 0. Returns ``(model in eval mode, last step's loss)``."""
    torch.manual_seed(0)
    model = KimiLinearForCausalLM(config).to(device).train()
    data = markov_tokens(steps * batch, seq, vocab=config.vocab_size, seed=1, device=device)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, betas=(0.9, 0.95), weight_decay=0.0)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda i: min((i + 1) / warmup, (steps - i) / (steps - warmup)))
    for x in data.split(batch):
        loss = model(x, labels=x, use_cache=False).loss
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
    return model.eval(), loss.item()


def check_trained_greedy(model32, dtype, ids, steps, *, err_floor):
    """Run ``model32`` (fp32, transformers' code: the reference) against copies in ``dtype``, one routed to kimiops
    and one on transformers' fallback, from the prompt ``ids`` [B, T]:

    - prefill logits: ``rel_err(kimiops, ref) <= max(1.5 * rel_err(fallback, ref), err_floor)``;
    - margins: along the fp32 greedy trajectory (decoded through each model's cache, all fed fp32's tokens:
      :func:`lockstep_decode`), the smallest fp32 top-2 logit gap must exceed 4x the fallback's largest logit
      error, else the argmaxes are not confident and the model is not trained enough;
    - ``steps`` free-running greedy tokens (:func:`greedy`) of kimiops identical to fp32's.

    Returns a one-line summary with the margin, the errors and the greedy tokens' agreement, for the test to print.
    """
    model_k, model_f = kt.enable(copy.deepcopy(model32).to(dtype)), copy.deepcopy(model32).to(dtype)
    with torch.no_grad():
        ref, out_k, out_f = (m(ids).logits.float() for m in (model32, model_k, model_f))
    err_k, err_f = rel_err(out_k, ref), rel_err(out_f, ref)
    assert err_k <= max(1.5 * err_f, err_floor), f"prefill: kimiops logits rel err {err_k:.3e}, fallback {err_f:.3e}"

    tokens32 = greedy(model32, ids, steps)
    seq, traj_k, traj32 = lockstep_decode(model_k, model32, ids, steps)  # all fed fp32's argmax
    traj_f = lockstep_decode(model_f, model32, ids, steps)[1]
    traj_k, traj_f, traj32 = (t[:, :steps] for t in (traj_k, traj_f, traj32))  # [B, steps, V]: tokens32's decisions
    top2 = traj32.topk(2, dim=-1).values
    margin = (top2[..., 0] - top2[..., 1]).min().item()
    noise_f, noise_k = (traj_f - traj32).abs().max().item(), (traj_k - traj32).abs().max().item()
    tokens_k = greedy(model_k, ids, steps)
    summary = (f"{dtype}: prefill logits rel err kimiops {err_k:.2e}, fallback {err_f:.2e}; over fp32's {steps} greedy "
               f"decisions x {ids.shape[0]} rows: min fp32 top-2 logit gap {margin:.3f}, max logit error fallback "
               f"{noise_f:.2e}, kimiops {noise_k:.2e}; kimiops greedy tokens equal to fp32's: "
               f"{int((tokens_k == tokens32).sum())} of {tokens32.numel()}")
    assert margin > 4 * noise_f, f"training too weak: fp32 top-2 margin not above 4x the fallback's noise; {summary}"
    assert torch.equal(seq[:, ids.shape[1]:], tokens32), f"lockstep and generate disagree; {summary}"
    assert torch.equal(tokens_k, tokens32), summary
    return summary


@pytest.fixture(scope="module")
def trained_tiny():
    """The tiny model, with dense MLPs as in ``gpu_config`` (the sparse layer's top-k expert choice flips at bf16
    ties, an occasional jump of the logits that has nothing to do with KDA), trained on CPU (~15 s on 2 cores):
    ``(model, last loss)``."""
    return trained_model(tiny_config(mlp_layer_types=["dense"] * 3), "cpu", steps=100, batch=6, seq=64, lr=1e-2)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["fp32", "bf16"])
def test_trained_model_greedy_tokens_identical(trained_tiny, dtype):
    """The trained-model check of the GPU test below on the tiny model, kimiops' torch path: in fp32 (fallback noise
    0) and in bf16 (kimiops' torch path and transformers' code in bf16 on CPU)."""
    model32, loss = trained_tiny
    ids = markov_tokens(2, 300, vocab=model32.config.vocab_size, seed=2)  # 5 chunks of 64
    summary = check_trained_greedy(model32, dtype, ids, 32, err_floor=2e-2 if dtype == torch.bfloat16 else 1e-5)
    print(f"trained tiny model, last loss {loss:.3f}; {summary}")


@pytest.mark.gpu
def test_gpu_trained_model_bf16_greedy_tokens_identical_to_fp32():
    """Issue 7 literally: bf16 with kimiops (Triton) vs transformers' fallback in fp32, logits within bf16 tolerance
    and 32 identical free-running greedy tokens, on the ``gpu_config`` model trained to confident logits."""
    # Training: 150 steps of 32 x 128 tokens, ~6k kernel launches and ~140 GB of memory traffic per step in the
    # fallback's broadcasts, so roughly 10 s on an H200 (an estimate). The same recipe run on CPU (with an equivalent
    # cheaper chunked KDA for speed) reached loss 1.24 (the process's entropy rate: 1.02) and, from 6 prompts, min
    # fp32 top-2 gaps of 2.4-3.3; the bf16 fallback's max logit error was 0.05-0.07 (prompts 2 and 3; kimiops' torch
    # path in bf16 the same): margins ~40x the error, where the check needs 4x.
    model32, loss = trained_model(gpu_config(), "cuda", steps=150, batch=32, seq=128, lr=3e-3)
    ids = markov_tokens(2, 300, vocab=model32.config.vocab_size, seed=2, device="cuda")
    print(f"trained gpu_config model, last loss {loss:.3f}; "
          f"{check_trained_greedy(model32, torch.bfloat16, ids, 32, err_floor=2e-2)}")
