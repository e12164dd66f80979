"""Public KDA ops (chunk_kda, fused_recurrent_kda): semantics, pools, validation, torch.compile.

Backends: "torch" always; "triton" runs the kernels (Triton interpreter on CPU, fp32 there).
"""

from pathlib import Path

import pytest
import torch

import kimiops
from kimiops.kda.reference import naive_recurrent_kda
from kimiops.testing import make_kda_inputs, rel_err

OPS = {
    "chunk_kda": (kimiops.chunk_kda, "initial_state_indices"),
    "fused_recurrent_kda": (kimiops.fused_recurrent_kda, "ssm_state_indices"),
}


@pytest.mark.parametrize("op_name", OPS)
@pytest.mark.parametrize("gate", ["mild", "softplus", "lower_bound"])
def test_in_kernel_preprocessing_matches_oracle(op_name, gate):
    op, _ = OPS[op_name]
    gen = torch.Generator().manual_seed(10)
    x = make_kda_inputs(2, 37, 1, 16, 16, HV=2, gate=gate, raw_gate=True, generator=gen)
    q_raw, k_raw = x.q * 3, x.k * 0.5  # not normalized: the op normalizes
    b_logit = torch.logit(x.beta)
    h0 = torch.randn(2, 2, 16, 16, generator=gen)
    o, ht = op(q_raw, k_raw, x.v, x.g, b_logit, initial_state=h0, output_final_state=True,
               use_qk_l2norm_in_kernel=True, use_gate_in_kernel=bool(x.gate_kwargs),
               use_beta_sigmoid_in_kernel=True, backend="torch", **x.gate_kwargs)
    o_ref, s_ref = naive_recurrent_kda(*x.oracle_args(), initial_state=h0.double(), output_final_state=True)
    # fp32 in-chunk cumsums of gates up to ~3e3 lose ~1e-5 relative: the torch path runs in fp32
    assert rel_err(o, o_ref) < 2e-4 and rel_err(ht, s_ref) < 2e-4


@pytest.mark.parametrize("op_name", OPS)
@pytest.mark.parametrize("v_first", [False, True])
def test_pool_mode_touches_only_named_slots(op_name, v_first):
    op, idx_name = OPS[op_name]
    gen = torch.Generator().manual_seed(11)
    lengths = [5, 0, 3, 7]
    cu = torch.tensor([0] + lengths).cumsum(0).to(torch.int32)
    x = make_kda_inputs(1, sum(lengths), 1, 16, 8, HV=2, generator=gen)
    slots = 9
    pool = torch.full((slots, 2, 8, 16) if v_first else (slots, 2, 16, 8), float("nan"))
    idx = torch.tensor([4, 1, -1, 7], dtype=torch.int32)
    real = torch.randn(4, *pool.shape[1:], generator=gen)
    for n, s in enumerate(idx.tolist()):
        if s >= 0:
            pool[s] = real[n]
    before = pool.clone()
    o, ret = op(x.q, x.k, x.v, x.g, x.beta, initial_state=pool, output_final_state=True, state_v_first=v_first,
                cu_seqlens=cu, backend="torch", **{idx_name: idx})
    assert ret is pool
    h0 = torch.where((idx >= 0)[:, None, None, None], real, torch.zeros_like(real)).double()
    o_ref, s_ref = naive_recurrent_kda(*x.oracle_args(), initial_state=h0, output_final_state=True, cu_seqlens=cu,
                                       state_v_first=v_first)
    untouched = [s for s in range(slots) if s not in (4, 1, 7)]
    assert torch.equal(pool[untouched].isnan(), before[untouched].isnan())
    for n, s in enumerate(idx.tolist()):
        if s >= 0:
            assert rel_err(pool[s], s_ref[n]) < 1e-5
    a, b = int(cu[2]), int(cu[3])  # the padded request
    if op_name == "fused_recurrent_kda":
        assert torch.equal(o[:, a:b], torch.zeros_like(o[:, a:b]))  # decode: padding outputs zeros
        keep = torch.ones(o.shape[1], dtype=torch.bool)
        keep[a:b] = False
        assert rel_err(o[:, keep], o_ref[:, keep]) < 1e-5
    else:
        assert rel_err(o, o_ref) < 1e-5  # prefill: padding starts from zeros, outputs computed


@pytest.mark.parametrize("op_name", OPS)
def test_no_final_state_unless_asked(op_name):
    op, _ = OPS[op_name]
    x = make_kda_inputs(1, 4, 1, 16, 16)
    o, ht = op(x.q, x.k, x.v, x.g, x.beta)
    assert ht is None and o.shape == x.v.shape and o.dtype == x.v.dtype


@pytest.mark.parametrize("op_name", OPS)
def test_torch_compile_fullgraph(op_name):
    op, idx_name = OPS[op_name]
    x = make_kda_inputs(1, 9, 1, 16, 16)
    pool = torch.randn(3, 1, 16, 16)
    idx = torch.tensor([2], dtype=torch.int32)

    def f(q, k, v, g, beta, pool, idx):
        o, _ = op(q, k, v, g, beta, initial_state=pool, **{idx_name: idx})
        return o * 2

    pool_eager = pool.clone()
    o_eager = f(x.q, x.k, x.v, x.g, x.beta, pool_eager, idx)
    compiled = torch.compile(f, fullgraph=True, backend="aot_eager")
    o_comp = compiled(x.q, x.k, x.v, x.g, x.beta, pool, idx)
    torch.testing.assert_close(o_comp, o_eager)
    torch.testing.assert_close(pool, pool_eager)  # the in-place pool update survives compilation


@pytest.mark.parametrize("op_name", OPS)
def test_torch_compile_dynamic_shapes(op_name):
    """A model compiled with dynamic shapes (what torch.compile does after a second prompt length)
    traces the op with symbolic token and sequence counts; each call matches the eager one."""
    op, idx_name = OPS[op_name]

    def f(q, k, v, g, beta, pool, idx, cu):
        o, _ = op(q, k, v, g, beta, initial_state=pool, cu_seqlens=cu, **{idx_name: idx})
        return o * 2

    compiled = torch.compile(f, fullgraph=True, backend="aot_eager", dynamic=True)
    for T, lens in ((9, [9]), (17, [5, 12]), (33, [10, 0, 23])):
        x = make_kda_inputs(1, T, 1, 16, 16)
        pool = torch.randn(4, 1, 16, 16)
        idx = torch.arange(len(lens), dtype=torch.int32)
        cu = torch.tensor([0] + list(torch.tensor(lens).cumsum(0)), dtype=torch.int32)
        pool_eager = pool.clone()
        o_eager = f(x.q, x.k, x.v, x.g, x.beta, pool_eager, idx, cu)
        o_comp = compiled(x.q, x.k, x.v, x.g, x.beta, pool, idx, cu)
        torch.testing.assert_close(o_comp, o_eager)
        torch.testing.assert_close(pool, pool_eager)


def test_decode_after_prefill_equals_longer_prefill():
    gen = torch.Generator().manual_seed(12)
    x = make_kda_inputs(1, 21, 2, 16, 16, HV=4, generator=gen)
    o_full, s_full = kimiops.chunk_kda(x.q, x.k, x.v, x.g, x.beta, output_final_state=True)
    o_pre, s_pre = kimiops.chunk_kda(*(t[:, :20] for t in (x.q, x.k, x.v, x.g, x.beta)), output_final_state=True)
    o_dec, s_dec = kimiops.fused_recurrent_kda(*(t[:, 20:] for t in (x.q, x.k, x.v, x.g, x.beta)),
                                               initial_state=s_pre, output_final_state=True)
    torch.testing.assert_close(torch.cat([o_pre, o_dec], 1), o_full, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(s_dec, s_full, rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------- validation
def _inputs():
    return make_kda_inputs(1, 8, 2, 16, 16, HV=4)


@pytest.mark.parametrize("op_name", OPS)
@pytest.mark.parametrize(
    "mutate, exc, match",
    [
        (lambda a: a.update(q=a["q"][..., :8]), ValueError, "k: expected shape"),
        (lambda a: a.update(v=a["v"][:, :, :3]), ValueError, "HV"),
        (lambda a: a.update(g=a["g"][:, :, :2]), ValueError, "g: expected shape"),
        (lambda a: a.update(beta=a["beta"][..., None]), ValueError, "beta"),
        (lambda a: a.update(q=a["q"].double()), TypeError, "q: expected dtype"),
        (lambda a: a.update(k=a["k"].half()), TypeError, "k: expected dtype"),
        (lambda a: a.update(q=a["q"].transpose(-1, -2).contiguous().transpose(-1, -2)), ValueError, "q: expected the last dimension contiguous"),
        (lambda a: a.update(initial_state=torch.zeros(2, 4, 16, 16)), ValueError, "initial_state: expected shape"),
        (lambda a: a.update(initial_state=torch.zeros(1, 4, 16, 16, dtype=torch.float64)), TypeError, "initial_state: expected dtype"),
        (lambda a: a.update(use_gate_in_kernel=True), ValueError, "A_log"),
        (lambda a: a.update(use_gate_in_kernel=True, lower_bound=-6.0), ValueError, r"lower_bound: expected a value in \[-5, 0\)"),
        (lambda a: a.update(use_gate_in_kernel=True, lower_bound=0.0), ValueError, "lower_bound"),
        (lambda a: a.update(use_gate_in_kernel=True, A_log=torch.zeros(3)), ValueError, "A_log: expected shape"),
        (lambda a: a.update(use_gate_in_kernel=True, A_log=torch.zeros(4), dt_bias=torch.zeros(7)), ValueError, "dt_bias"),
        (lambda a: a.update(cu_seqlens=torch.tensor([0, 3, 8])), ValueError, "batch size 1"),
        (lambda a: a.update(scale="x"), TypeError, "scale"),
        (lambda a: a.update(scale=float("nan")), ValueError, "scale: expected a finite float"),
        (lambda a: a.update(q=a["q"][..., :0], k=a["k"][..., :0], g=a["g"][..., :0]), ValueError, "K, V >= 1"),
        (lambda a: a.update(backend="cutlass"), ValueError, "backend"),
        # the kernels read these small tensors at offset n: strided views are refused, not misread
        (lambda a: a.update(initial_state=torch.zeros(1, 4, 16, 16).transpose(-1, -2)), ValueError,
         "initial_state: expected a contiguous tensor"),
        (lambda a: a.update(use_gate_in_kernel=True, A_log=torch.zeros(8)[::2]), ValueError,
         "A_log: expected a contiguous tensor"),
        (lambda a: a.update(use_gate_in_kernel=True, A_log=torch.zeros(4), dt_bias=torch.zeros(16, 4).t()), ValueError,
         "dt_bias: expected a contiguous tensor"),
    ],
)
def test_bad_input_raises_clear_error(op_name, mutate, exc, match):
    op, _ = OPS[op_name]
    x = _inputs()
    args = dict(q=x.q, k=x.k, v=x.v, g=x.g, beta=x.beta)
    if "cu_seqlens" in match or "batch" in match:
        args = {n: torch.cat([t, t]) for n, t in args.items()}
    mutate(args)
    with pytest.raises(exc, match=match):
        op(**args)


@pytest.mark.parametrize("op_name", OPS)
@pytest.mark.parametrize(
    "cu, match",
    [([1, 8], r"cu_seqlens\[0\] == 0"), ([0, 5, 3, 8], "non-decreasing"), ([0, 4, 7], r"== 8"),
     ([[0, 8]], "1 dimensions")],
)
def test_bad_cu_seqlens(op_name, cu, match):
    op, _ = OPS[op_name]
    x = _inputs()
    with pytest.raises(ValueError, match=match):
        op(x.q, x.k, x.v, x.g, x.beta, cu_seqlens=torch.tensor(cu))
    with pytest.raises(TypeError, match="cu_seqlens: expected dtype"):
        op(x.q, x.k, x.v, x.g, x.beta, cu_seqlens=torch.tensor([0.0, 8.0]))


@pytest.mark.parametrize("op_name", OPS)
def test_bad_pool_indices(op_name):
    op, idx_name = OPS[op_name]
    x = _inputs()
    pool = torch.zeros(3, 4, 16, 16)
    for idx, match in (([3], r"\[-1, 3\)"), ([-2], r"\[-1, 3\)")):
        with pytest.raises(ValueError, match=match):
            op(x.q, x.k, x.v, x.g, x.beta, initial_state=pool, **{idx_name: torch.tensor(idx, dtype=torch.int32)})
    with pytest.raises(ValueError, match=idx_name):
        op(x.q, x.k, x.v, x.g, x.beta, initial_state=pool, **{idx_name: torch.tensor([0, 1], dtype=torch.int32)})
    with pytest.raises(ValueError, match="pool"):
        op(x.q, x.k, x.v, x.g, x.beta, initial_state=torch.zeros(3, 4, 8, 16), **{idx_name: torch.tensor([0], dtype=torch.int32)})
    with pytest.raises(ValueError, match="initial_state"):
        op(x.q, x.k, x.v, x.g, x.beta, **{idx_name: torch.tensor([0], dtype=torch.int32)})


@pytest.mark.parametrize("op_name", OPS)
def test_strided_indices_and_cu_seqlens_are_refused(op_name):
    """A column of a slot table or every other entry of a longer tensor: the kernels would read
    them as contiguous and touch slots nobody named, so they are refused with the argument's name."""
    op, idx_name = OPS[op_name]
    x = _inputs()
    pool = torch.zeros(6, 4, 16, 16)
    table = torch.tensor([[5, 1]], dtype=torch.int32)
    table2 = torch.tensor([[5, 1], [2, 3]], dtype=torch.int32)
    with pytest.raises(ValueError, match=f"{idx_name}: expected a contiguous tensor"):
        cat = {n: torch.cat([t, t], 1) for n, t in dict(q=x.q, k=x.k, v=x.v, g=x.g, beta=x.beta).items()}
        op(**cat, initial_state=pool, cu_seqlens=torch.tensor([0, 8, 16]), **{idx_name: table2[:, 0]})
    assert table[:, 0].is_contiguous()  # a single entry is contiguous whatever its stride
    with pytest.raises(ValueError, match="cu_seqlens: expected a contiguous tensor"):
        op(x.q, x.k, x.v, x.g, x.beta, cu_seqlens=torch.tensor([0, 9, 8, 9])[::2])


def test_strided_num_accepted_tokens_is_refused():
    x = make_kda_inputs(1, 4, 2, 16, 16, HV=4)
    pool = torch.zeros(9, 4, 16, 16)
    idx = torch.tensor([[1, 2], [3, 4]], dtype=torch.int32)
    acc = torch.tensor([[1, 9], [2, 9]], dtype=torch.int32)[:, 0]
    with pytest.raises(ValueError, match="num_accepted_tokens: expected a contiguous tensor"):
        kimiops.fused_recurrent_kda(x.q, x.k, x.v, x.g, x.beta, initial_state=pool, state_v_first=True,
                                    cu_seqlens=torch.tensor([0, 2, 4]), ssm_state_indices=idx,
                                    num_accepted_tokens=acc)


@pytest.mark.parametrize("op_name", OPS)
@pytest.mark.parametrize("backend", ["torch", "triton"])
def test_calls_without_tokens_return_the_initial_states(op_name, backend):
    """B = 0 or T = 0 (an empty batch, or varlen sequences all of length 0): nothing runs; each
    sequence's final state is its initial state (pools untouched)."""
    op, idx_name = OPS[op_name]
    H, HV, K, V = 2, 4, 16, 16
    empty = dict(q=torch.zeros(1, 0, H, K), k=torch.zeros(1, 0, H, K), v=torch.zeros(1, 0, HV, V),
                 g=torch.zeros(1, 0, HV, K), beta=torch.zeros(1, 0, HV))
    h0 = torch.randn(2, HV, K, V)
    o, ht = op(**empty, initial_state=h0, output_final_state=True, cu_seqlens=torch.tensor([0, 0, 0]),
               backend=backend)
    assert o.shape == (1, 0, HV, V) and torch.equal(ht, h0) and ht.data_ptr() != h0.data_ptr()
    o, ht = op(**empty, output_final_state=True, cu_seqlens=torch.tensor([0, 0]), state_v_first=True, backend=backend)
    assert torch.equal(ht, torch.zeros(1, HV, V, K))
    batch0 = {n: torch.zeros(0, 3, *t.shape[2:]) for n, t in empty.items()}
    o, ht = op(**batch0, output_final_state=True, backend=backend)
    assert o.shape == (0, 3, HV, V) and ht.shape == (0, HV, K, V)
    pool = torch.randn(3, HV, V, K)
    before = pool.clone()
    o, out_pool = op(**empty, initial_state=pool, state_v_first=True, output_final_state=True,
                     cu_seqlens=torch.tensor([0, 0, 0]), **{idx_name: torch.tensor([2, 0], dtype=torch.int32)},
                     backend=backend)
    assert out_pool is pool and torch.equal(pool, before)


@pytest.mark.parametrize("backend", ["torch", "triton"])
def test_snapshots_of_calls_without_tokens_hold_the_initial_states(backend):
    """Chunk 0 of a sequence without tokens is its initial state: pool slot, zeros for -1, or h0;
    rows with -1 keep what they held."""
    H, K = 1, 16
    none = dict(q=torch.zeros(1, 0, H, K), k=torch.zeros(1, 0, H, K), v=torch.zeros(1, 0, H, K),
                g=torch.zeros(1, 0, H, K), beta=torch.zeros(1, 0, H))
    pool = torch.randn(3, H, K, K)
    pool[0] = float("nan")
    track = torch.full((3, H, K, K), float("nan"))
    kimiops.chunk_kda(**none, initial_state=pool, initial_state_indices=torch.tensor([2, -1, 1], dtype=torch.int32),
                      cu_seqlens=torch.tensor([0, 0, 0, 0]), track_state=track,
                      track_chunk_idx=torch.tensor([0, 0, -1], dtype=torch.int32), backend=backend)
    assert torch.equal(track[0], pool[2]) and torch.equal(track[1], torch.zeros(H, K, K)) and track[2].isnan().all()
    h0 = torch.randn(2, H, K, K)
    track = torch.full((2, H, K, K), float("nan"))
    kimiops.chunk_kda(**{n: torch.zeros(2, 0, *t.shape[2:]) for n, t in none.items()}, initial_state=h0,
                      track_state=track, track_chunk_idx=torch.tensor([0, 0], dtype=torch.int32), backend=backend)
    assert torch.equal(track, h0)


@pytest.mark.parametrize("op_name", OPS)
@pytest.mark.parametrize("backend", ["torch", "triton"])
def test_output_is_contiguous_for_a_permuted_v(op_name, backend):
    """Every implementation returns a contiguous o, also when v is dense but permuted (the custom
    op's fake says so, which torch.compile's inductor checks)."""
    op, _ = OPS[op_name]
    x = make_kda_inputs(2, 5, 1, 16, 16)
    v = x.v.transpose(0, 1).contiguous().transpose(0, 1)
    o, _ = op(x.q, x.k, v, x.g, x.beta, backend=backend)
    assert o.is_contiguous() and torch.equal(o, op(x.q, x.k, x.v, x.g, x.beta, backend=backend)[0])


@pytest.mark.parametrize("op_name", OPS)
def test_fake_output_has_the_real_strides(op_name):
    """The custom op's fake gives o the strides the real op returns (contiguous), also for a dense
    but permuted v: torch.compile's inductor checks them (``torch.library.opcheck``)."""
    x = make_kda_inputs(2, 5, 1, 16, 16)
    v = x.v.transpose(0, 1).contiguous().transpose(0, 1)
    op = getattr(torch.ops.kimiops, op_name).default
    args = (x.q, x.k, v, x.g, x.beta, None, None, None, None, None, None, None, None, True, False, False, False,
            False, "triton", False, False, None, None, None, None, None, None, -1)
    torch.library.opcheck(op, args, test_utils=("test_faketensor",))


@pytest.mark.parametrize("scale", [1e-5, 1e-8, -3e-6, 2e5, 0.3])
def test_prefill_scales_far_from_one_keep_their_accuracy(scale):
    """Stage 1 keeps ``scale * q * e^G`` in fp16 scratch: scales outside 2^-6..2^6 run the kernels at
    the range's end and scale o afterwards (1e-5 erred 1.2e-2 and 2e5 gave Inf before)."""
    from kimiops.kda.gate import l2norm
    from kimiops.kda.reference import naive_recurrent_kda

    gen = torch.Generator().manual_seed(3)
    q, k, v = (torch.randn(1, 40, 1, 16, generator=gen) for _ in range(3))
    g, beta = -torch.rand(1, 40, 1, 16, generator=gen) * 0.1, torch.rand(1, 40, 1, generator=gen)
    want, _ = naive_recurrent_kda(l2norm(q.double()), l2norm(k.double()), v.double(), g.double(), beta.double(),
                                  scale=scale)
    o, _ = kimiops.chunk_kda(q, k, v, g, beta, scale=scale, use_qk_l2norm_in_kernel=True, backend="triton")
    assert o.isfinite().all() and rel_err(o, want) < 2e-3


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_gpu_repeated_prefill_with_a_tiny_scale_keeps_the_output_multiply():
    """Eager calls that repeat a signature replay recorded launches; a scale outside the kernels'
    range adds a multiply after them, so such calls are never recorded: every repeat gives the
    first call's bits, and the result meets the oracle."""
    from kimiops.kda.gate import l2norm
    from kimiops.kda.reference import naive_recurrent_kda

    gen = torch.Generator(device="cuda").manual_seed(4)
    q, k, v = (torch.randn(1, 300, 4, 128, device="cuda", generator=gen, dtype=torch.bfloat16) for _ in range(3))
    g = -torch.rand(1, 300, 4, 128, device="cuda", generator=gen) * 0.1
    beta = torch.rand(1, 300, 4, device="cuda", generator=gen)
    runs = [kimiops.chunk_kda(q, k, v, g, beta, scale=1e-5, use_qk_l2norm_in_kernel=True)[0] for _ in range(4)]
    assert all(torch.equal(r, runs[0]) for r in runs[1:])
    want, _ = naive_recurrent_kda(l2norm(q.double()), l2norm(k.double()), v.double(), g.double(), beta.double(),
                                  scale=1e-5)
    assert rel_err(runs[0], want) < 1e-2  # bf16 output


def test_split_prefill_scale_is_exact_and_leaves_usual_scales_alone():
    from kimiops.kda.runner import PREFILL_KERNEL_SCALES, split_prefill_scale

    lo, hi = PREFILL_KERNEL_SCALES
    for scale in (128**-0.5, 1.0, lo, hi, -0.5):
        assert split_prefill_scale(scale) == (scale, 1.0)
    for scale in (1e-5, -1e-5, 2e5, 0.0):
        kernel, rest = split_prefill_scale(scale)
        assert lo <= abs(kernel) <= hi and kernel * rest == scale


def test_torch_path_keeps_mild_decays_after_a_run_of_huge_ones():
    """The torch path's in-chunk cumsum in float64: 56 steps of -3000 then mild ones in one chunk
    (the state erred 7e-3 with an fp32 cumsum)."""
    from kimiops.kda.gate import l2norm
    from kimiops.kda.reference import naive_recurrent_kda

    gen = torch.Generator().manual_seed(0)
    q, k = (l2norm(torch.randn(1, 64, 1, 16, generator=gen)) for _ in range(2))
    v, beta = torch.randn(1, 64, 1, 16, generator=gen), torch.rand(1, 64, 1, generator=gen) * 0.5
    g = torch.full((1, 64, 1, 16), -0.005)
    g[:, :56] = -3000.0
    want_o, want_s = naive_recurrent_kda(q.double(), k.double(), v.double(), g.double(), beta.double(),
                                         output_final_state=True)
    o, s = kimiops.chunk_kda(q, k, v, g, beta, output_final_state=True, backend="torch")
    assert rel_err(o, want_o) < 1e-5 and rel_err(s, want_s) < 1e-5


def test_memoized_checks_tell_true_from_one():
    """The metadata memo (and the eager shortcut's scalar key) keep scalars with their type:
    ``scale=True`` after ``scale=1`` is still refused (True == 1 and both hash alike)."""
    from kimiops.kda import args as kda_args
    from kimiops.kda import runner

    assert kda_args.meta_key(1, None) != kda_args.meta_key(True, None)
    one, true = (runner.eager_scalars(runner.DECODE, s, None, False, False, False, False, None, None, None, False,
                                      None, None, None, False) for s in (1, True))
    assert one != true


def test_decode_pool_may_be_bf16_prefill_pool_must_be_fp32():
    x = _inputs()
    pool = torch.zeros(3, 4, 16, 16, dtype=torch.bfloat16)
    idx = torch.tensor([1], dtype=torch.int32)
    kimiops.fused_recurrent_kda(x.q, x.k, x.v, x.g, x.beta, initial_state=pool, ssm_state_indices=idx)
    assert pool[1].abs().sum() > 0 and pool[0].abs().sum() == 0
    with pytest.raises(TypeError, match="initial_state: expected dtype float32"):
        kimiops.chunk_kda(x.q, x.k, x.v, x.g, x.beta, initial_state=pool, initial_state_indices=idx)


def test_value_checks_on_cuda_only_in_debug_mode(monkeypatch):
    from kimiops.validation import debug_enabled, reads_values

    monkeypatch.delenv("KIMIOPS_DEBUG", raising=False)
    assert not debug_enabled() and reads_values(torch.zeros(1))
    monkeypatch.setenv("KIMIOPS_DEBUG", "1")
    assert debug_enabled()


@pytest.mark.parametrize("op_name", OPS)
def test_head_dims_256_run_the_triton_kernels(op_name):
    """K = V = 256 is a kernel size of both ops (CPU: Triton's interpreter), not a torch fallback."""
    op, _ = OPS[op_name]
    gen = torch.Generator().manual_seed(12)
    x = make_kda_inputs(1, 40, 1, 256, 256, HV=2, gate="softplus", raw_gate=True, generator=gen)
    o, ht = op(x.q, x.k, x.v, x.g, x.beta, output_final_state=True, use_gate_in_kernel=True, backend="triton",
               **x.gate_kwargs)
    o_ref, s_ref = naive_recurrent_kda(*x.oracle_args(), output_final_state=True)
    assert rel_err(o, o_ref) < 3e-3 and rel_err(ht, s_ref) < 3e-3


def test_forced_triton_rejects_unsupported_head_dims(monkeypatch):
    x = make_kda_inputs(1, 4, 1, 48, 48)
    with pytest.raises(ValueError, match="head dims"):
        kimiops.chunk_kda(x.q, x.k, x.v, x.g, x.beta, backend="triton")


def test_empty_cache_releases_scratch_and_eager_launches():
    from kimiops.kda import runner, workspace

    workspace.get_buffer("test_scratch", torch.device("cpu"), torch.float32, 2, (4,), 3)
    runner._eager[("test",)] = []
    runner.seen_before(("test",))
    assert workspace.cached_bytes() > 0
    kimiops.empty_cache()
    assert workspace.cached_bytes() == 0 and not runner._eager and not runner._seen


def test_eager_shortcut_records_a_signature_on_its_second_miss(monkeypatch):
    """Calls whose shapes never come back (eager extend in a serving engine) are not recorded: a
    miss is recorded only when the same shapes missed recently; the record of misses is bounded."""
    from kimiops.kda import runner

    runner.forget_eager()
    assert not runner.seen_before(("a", 1))
    assert not runner.seen_before(("b", 2))
    assert runner.seen_before(("a", 1))       # second sighting: record it
    assert not runner.seen_before(("a", 1))   # forgotten once recorded (a failed record tries again later)
    monkeypatch.setattr(runner, "_EAGER_SEEN_SIZE", 3)
    for i in range(5):
        runner.seen_before(("c", i))
    assert len(runner._seen) == 3 and not runner.seen_before(("b", 2))  # the oldest were dropped
    runner.forget_eager()
    assert not runner._seen


def test_metadata_only_checks_are_memoized_and_still_reject_bad_input(monkeypatch):
    """Non-CPU tensors without KIMIOPS_DEBUG: the checks depend only on metadata and are cached."""
    from kimiops.kda import args

    monkeypatch.delenv("KIMIOPS_DEBUG", raising=False)
    monkeypatch.setattr(args, "_validated", args.OrderedDict())
    q = torch.empty(1, 4, 2, 32, device="meta")
    v = torch.empty(1, 4, 4, 32, device="meta")
    g = torch.empty(1, 4, 4, 32, device="meta")
    beta = torch.empty(1, 4, 4, device="meta")
    pool = torch.empty(3, 4, 32, 32, device="meta")
    idx = torch.empty(1, dtype=torch.int32, device="meta")

    def check(**kw):
        base = dict(q=q, k=q, v=v, g=g, beta=beta, scale=None, initial_state=pool, use_gate_in_kernel=False,
                    A_log=None, dt_bias=None, lower_bound=None, state_v_first=True, cu_seqlens=None,
                    indices=idx, indices_name="ssm_state_indices")
        base.update(kw)
        return args.check_kda_args(**base)

    first = check()
    assert check() is first and len(args._validated) == 1
    assert check(scale=0.5).scale == 0.5 and len(args._validated) == 2
    with pytest.raises(TypeError, match="k: expected dtype"):
        check(k=q.half())
    with pytest.raises(ValueError, match="pool"):
        check(initial_state=torch.empty(3, 4, 16, 32, device="meta"))
    full = []
    original = args._check_kda_args
    monkeypatch.setattr(args, "_check_kda_args", lambda *a: full.append(1) or original(*a))
    check()
    assert full == []  # served from the cache
    monkeypatch.setattr(args, "debug_enabled", lambda: True)
    monkeypatch.setattr(args, "reads_values", lambda t: False)  # meta tensors have no values to read
    check()
    assert full == [1]  # debug mode: always checked in full


@pytest.mark.gpu
@pytest.mark.parametrize("op_name", OPS)
def test_gpu_value_checks_only_in_debug_mode(op_name, monkeypatch):
    """CUDA tensors: index ranges and cu_seqlens order are checked only with KIMIOPS_DEBUG=1."""
    op, idx_name = OPS[op_name]
    x = make_kda_inputs(1, 8, 2, 32, 32, HV=4, device="cuda")
    pool = torch.zeros(3, 4, 32, 32, device="cuda")
    bad_idx = torch.tensor([3], dtype=torch.int32, device="cuda")
    bad_cu = torch.tensor([0, 5, 3, 8], device="cuda")
    monkeypatch.setenv("KIMIOPS_DEBUG", "1")
    with pytest.raises(ValueError, match=r"\[-1, 3\)"):
        op(x.q, x.k, x.v, x.g, x.beta, initial_state=pool, **{idx_name: bad_idx})
    with pytest.raises(ValueError, match="non-decreasing"):
        op(x.q, x.k, x.v, x.g, x.beta, cu_seqlens=bad_cu)


# --------------------------------------------------------------------------- eager decode shortcut
def _call_args(**over):
    gen = torch.Generator().manual_seed(0)
    a = dict(q=torch.randn(1, 2, 2, 16, generator=gen), k=torch.randn(1, 2, 2, 16, generator=gen),
             v=torch.randn(1, 2, 2, 16, generator=gen), g=torch.randn(1, 2, 2, 16, generator=gen),
             beta=torch.randn(1, 2, 2, generator=gen), scale=None, initial_state=torch.zeros(4, 2, 16, 16),
             output_final_state=False, use_qk_l2norm=True, use_gate=False, use_beta_sigmoid=True, A_log=None,
             dt_bias=None, lower_bound=None, state_v_first=True, cu_seqlens=torch.tensor([0, 1, 2], dtype=torch.int32),
             indices=torch.tensor([0, 3], dtype=torch.int32), backend=None, allow_padded_tokens=False)
    a.update(over)
    return a


def _sig(a):
    """(scalar key, guard arguments) of a decode call, as ``runner.eager_call`` forms them."""
    from kimiops.kda.runner import DECODE, eager_scalars, eager_tensors

    scalars = eager_scalars(DECODE, a["scale"], a["initial_state"], a["output_final_state"], a["use_qk_l2norm"],
                            a["use_gate"], a["use_beta_sigmoid"], a["A_log"], a["dt_bias"], a["lower_bound"],
                            a["state_v_first"], a["cu_seqlens"], a["indices"], a["backend"], a["allow_padded_tokens"])
    return scalars, eager_tensors(a["q"], a["k"], a["v"], a["g"], a["beta"], a["initial_state"], a["indices"],
                                  a["cu_seqlens"], a["A_log"], a["dt_bias"])


def _reuses(base, **over) -> bool:
    """Whether a call with ``over`` changed would reuse the launch remembered for ``base``'s call."""
    from kimiops.kda.runner import tensor_guard

    scalars, tensors = _sig(base)
    guard = tensor_guard(tensors)
    assert guard is not None, "this torch has no TensorGuards: the eager shortcut would be off"
    other_scalars, other_tensors = _sig(dict(base, **over))
    return other_scalars == scalars and guard.check(*other_tensors)


def test_eager_signature_follows_metadata_not_values():
    """The eager decode shortcut (runner._eager) may reuse a launch only for calls whose shapes,
    strides, dtypes, devices, pool alignment, scalars, flags and backend request all match."""
    base = _call_args()
    assert _reuses(base)
    assert _reuses(base, q=torch.ones(1, 2, 2, 16))                                 # values do not matter
    assert _reuses(base, indices=torch.tensor([2, -1], dtype=torch.int32))
    assert not _reuses(base, q=torch.randn(1, 2, 2, 32)[..., :16])                   # strides
    assert not _reuses(base, beta=torch.randn(1, 2, 4)[..., ::2])
    assert not _reuses(base, q=torch.randn(1, 2, 2, 16, dtype=torch.float16))       # dtype
    assert not _reuses(base, initial_state=torch.zeros(5, 2, 16, 16))                # pool size
    assert not _reuses(base, initial_state=torch.zeros(4 * 2 * 16 * 16 + 1)[1:].view(4, 2, 16, 16))  # alignment
    assert not _reuses(base, indices=torch.tensor([0, 3], dtype=torch.int64))
    assert not _reuses(base, k=torch.randn(1, 2, 2, 16).requires_grad_())            # dispatch keys
    for name, value in (("scale", 0.5), ("lower_bound", -1.0), ("backend", "triton"), ("use_qk_l2norm", False),
                        ("output_final_state", True), ("cu_seqlens", None)):
        assert not _reuses(base, **{name: value}), name
    # an absent optional tensor never matches a present one, whatever its metadata
    assert not _reuses(dict(base, A_log=torch.empty(0)), A_log=None)
    assert not _reuses(dict(base, A_log=None), A_log=torch.empty(0))


def test_eager_signature_of_wrong_types_never_reuses():
    """Arguments of the wrong type never match a remembered launch (the full path then raises the
    clear error); a non-tensor state has no key at all."""
    base = _call_args()
    assert not _reuses(base, A_log=[0.0, 1.0])
    assert not _reuses(base, q=torch.randn(1, 2, 2, 16).numpy())
    with pytest.raises(AttributeError):
        _sig(_call_args(initial_state=[0.0]))


def test_eager_signature_follows_backend_environment(monkeypatch):
    base = _call_args()
    scalars = _sig(base)[0]
    monkeypatch.setenv("KIMIOPS_BACKEND", "torch")
    assert _sig(base)[0] != scalars


def test_eager_guard_is_not_built_for_a_tensor_passed_twice():
    """torch's tensor guard never matches a call that passes one tensor object twice (``k is q``),
    so such a call is not remembered (it would miss on every later call) and takes the full path."""
    from kimiops.kda.runner import tensor_guard

    a = _call_args()
    scalars, tensors = _sig(dict(a, k=a["q"]))
    assert tensor_guard(tensors) is None
    assert tensor_guard(_sig(a)[1]) is not None


def _eager_entries():
    from kimiops.kda import runner

    return sum(len(entries) for entries in runner._eager.values())


@pytest.mark.gpu
def test_gpu_repeated_decode_calls_match_the_full_path(monkeypatch):
    """Repeated eager decode calls (the bound-launch shortcut) give the results of the full path,
    for new values, a different pool slot order, and a changed stride (which takes the full path)."""
    import kimiops
    from kimiops.kda import runner

    gen = torch.Generator(device="cuda").manual_seed(1)
    N, H, D, S = 4, 4, 128, 9

    def inputs():
        q, k, v, g = (torch.randn(1, N, H, D, device="cuda", generator=gen, dtype=torch.bfloat16) for _ in range(4))
        beta = torch.randn(1, N, H, device="cuda", generator=gen, dtype=torch.bfloat16)
        return q, k, v, g, beta

    A_log = torch.randn(H, device="cuda", generator=gen)
    dt = torch.randn(H * D, device="cuda", generator=gen)
    cu = torch.arange(N + 1, dtype=torch.int32, device="cuda")
    pool0 = torch.randn(S, H, D, D, device="cuda", generator=gen) * 0.1

    def call(pool, idx, q, k, v, g, beta):
        return kimiops.fused_recurrent_kda(
            q, k, v, g, beta, initial_state=pool, ssm_state_indices=idx, cu_seqlens=cu, state_v_first=True,
            use_qk_l2norm_in_kernel=True, use_gate_in_kernel=True, use_beta_sigmoid_in_kernel=True, A_log=A_log,
            dt_bias=dt, output_final_state=True)

    runner.forget_eager()
    steps = [(inputs(), torch.tensor(p, dtype=torch.int32, device="cuda"))
             for p in ([0, 3, 5, -1], [5, 0, -1, 3], [1, 2, 3, 4])]
    fast_pool, full_pool = pool0.clone(), pool0.clone()
    kept = []
    for (q, k, v, g, beta), idx in steps:
        o_fast, _ = call(fast_pool, idx, q, k, v, g, beta)
        monkeypatch.setenv("KIMIOPS_DEBUG", "1")  # debug mode never takes the shortcut
        o_full, _ = call(full_pool, idx, q, k, v, g, beta)
        monkeypatch.delenv("KIMIOPS_DEBUG")
        assert torch.equal(o_fast, o_full) and o_fast.is_contiguous()
        assert torch.equal(fast_pool, full_pool)
        kept.append((o_fast, o_full.clone()))
    # outputs of later calls never overwrite earlier ones (each call allocates its own o)
    assert all(torch.equal(a, b) for a, b in kept)
    assert _eager_entries() == 1
    q, k, v, g, beta = inputs()
    q_strided = torch.randn(1, N, H, 2 * D, device="cuda", dtype=torch.bfloat16)[..., :D]
    q_strided.copy_(q)
    o_a, _ = call(fast_pool.clone(), steps[0][1], q_strided, k, v, g, beta)  # a new signature: seen
    o_a2, _ = call(fast_pool.clone(), steps[0][1], q_strided, k, v, g, beta)  # seen before: recorded
    o_b, _ = call(fast_pool.clone(), steps[0][1], q, k, v, g, beta)
    assert torch.equal(o_a, o_b) and torch.equal(o_a2, o_b) and _eager_entries() == 2


@pytest.mark.gpu
def test_gpu_repeated_decode_calls_sharing_one_tensor_take_the_full_path(monkeypatch):
    """A call that passes one tensor twice (here ``k is q``) is not remembered by the eager shortcut
    and gives the full path's results on every call."""
    import kimiops
    from kimiops.kda import runner

    gen = torch.Generator(device="cuda").manual_seed(3)
    N, H, D = 2, 2, 64
    pool = torch.randn(4, H, D, D, device="cuda", generator=gen) * 0.1
    idx = torch.tensor([2, 0], dtype=torch.int32, device="cuda")
    runner.forget_eager()
    for _ in range(3):
        q, v, g = (torch.randn(N, 1, H, D, device="cuda", generator=gen, dtype=torch.bfloat16) for _ in range(3))
        beta = torch.rand(N, 1, H, device="cuda", generator=gen, dtype=torch.bfloat16)
        g = -g.float().abs().to(torch.bfloat16)
        fast, full = pool.clone(), pool.clone()
        o_fast, _ = kimiops.fused_recurrent_kda(q, q, v, g, beta, initial_state=fast, ssm_state_indices=idx,
                                                state_v_first=True, use_qk_l2norm_in_kernel=True)
        monkeypatch.setenv("KIMIOPS_DEBUG", "1")
        o_full, _ = kimiops.fused_recurrent_kda(q, q, v, g, beta, initial_state=full, ssm_state_indices=idx,
                                                state_v_first=True, use_qk_l2norm_in_kernel=True)
        monkeypatch.delenv("KIMIOPS_DEBUG")
        assert torch.equal(o_fast, o_full) and torch.equal(fast, full)
    assert _eager_entries() == 0


@pytest.mark.gpu
def test_gpu_repeated_decode_calls_with_strided_views_match_the_full_path(monkeypatch):
    """transformers' decode layout: B rows of one token, q/k/v views into one fused [B, 1, 3*H*D] projection (batch
    stride 3*H*D), a per-call fp32 state and a final-state output. Repeated calls take the bound launch, which must
    read these views with their own strides (a launch bound to contiguous copies read row 1 from row 0's k)."""
    import kimiops
    from kimiops.kda import runner

    gen = torch.Generator(device="cuda").manual_seed(2)
    B, H, D = 3, 4, 128

    def inputs():
        qkv = torch.randn(B, 1, 3 * H * D, device="cuda", generator=gen, dtype=torch.bfloat16)
        q, k, v = (x.view(B, 1, H, D) for x in qkv.split(H * D, -1))
        g = (-torch.rand(B, 1, 2 * H * D, device="cuda", generator=gen))[..., : H * D].view(B, 1, H, D)
        beta = torch.rand(B, 1, 2 * H, device="cuda", generator=gen, dtype=torch.bfloat16)[..., :H]
        assert q.stride(0) == 3 * H * D and not g.is_contiguous() and not beta.is_contiguous()
        state = torch.randn(B, H, D, D, device="cuda", generator=gen) * 0.1
        return q, k, v, g, beta, state

    def call(q, k, v, g, beta, state):
        return kimiops.fused_recurrent_kda(q, k, v, g, beta, initial_state=state, output_final_state=True,
                                           use_qk_l2norm_in_kernel=True)

    runner.forget_eager()
    for _ in range(3):
        args = inputs()
        o_fast, s_fast = call(*args)
        monkeypatch.setenv("KIMIOPS_DEBUG", "1")  # debug mode never takes the shortcut
        o_full, s_full = call(*args)
        monkeypatch.delenv("KIMIOPS_DEBUG")
        assert torch.equal(o_fast, o_full) and torch.equal(s_fast, s_full)
        assert o_fast.is_contiguous() and not args[2].is_contiguous()  # o is contiguous for a strided v
        o_dense, s_dense = call(*(x.contiguous() for x in args))
        torch.testing.assert_close(o_fast, o_dense, rtol=0, atol=0)
        torch.testing.assert_close(s_fast, s_dense, rtol=0, atol=0)
    assert _eager_entries() == 2  # the strided signature and the dense one


@pytest.mark.gpu
@pytest.mark.parametrize("form", ["backend", "varlen", "dense"])
def test_gpu_eager_decode_with_new_batch_sizes_gives_the_full_path_bits(monkeypatch, form):
    """Eager decode whose batch size changes from call to call (an engine without CUDA graphs):
    every call, whether it takes the full path, an elastic entry (a new N) or an exact one (an N
    seen before), gives the full path's output and pool bit for bit. The sizes cross every row of
    the config tables at 32 value heads, and come back to earlier ones.

    ``backend``: ``KDABackend.decode`` (batch mode, one token per request, padded requests);
    ``varlen``: ``fused_recurrent_kda`` with cu_seqlens and 1-2 tokens per sequence;
    ``dense``: batch mode with a dense initial state and the final states returned."""
    from kimiops.kda import runner

    gen, cpu_gen = torch.Generator(device="cuda").manual_seed(5), torch.Generator().manual_seed(5)
    H, D, S = 32, 128, 80
    A_log = torch.rand(H, device="cuda", generator=gen)
    dt = torch.randn(H * D, device="cuda", generator=gen)
    backend = kimiops.KDABackend(H, D, D)
    replays = []
    elastic_decode = runner._elastic_decode

    def counted(*args):
        res = elastic_decode(*args)
        replays.append(res is not None)
        return res

    monkeypatch.setattr(runner, "_elastic_decode", counted)

    def inputs(N, T):
        q, k, v, g = (torch.randn(1, T, H, D, device="cuda", generator=gen, dtype=torch.bfloat16) for _ in range(4))
        beta = torch.randn(1, T, H, device="cuda", generator=gen, dtype=torch.bfloat16)
        perm = torch.randperm(S, device="cuda", generator=gen)[:N].to(torch.int32)
        perm[::5] = -1  # padded requests
        return q, k, v, g, beta, perm

    def call(N, pool, q, k, v, g, beta, idx, cu):
        if form == "backend":
            return backend.decode(q, k, v, g, beta, ssm_states=pool, cache_indices=idx, A_log=A_log, dt_bias=dt), None
        kw = dict(use_qk_l2norm_in_kernel=True, use_gate_in_kernel=True, use_beta_sigmoid_in_kernel=True,
                  A_log=A_log, dt_bias=dt, state_v_first=True)
        if form == "varlen":
            return kimiops.fused_recurrent_kda(q, k, v, g, beta, initial_state=pool, ssm_state_indices=idx,
                                               cu_seqlens=cu, **kw)
        rows = (x[0].unsqueeze(1) for x in (q, k, v, g, beta))
        return kimiops.fused_recurrent_kda(*rows, initial_state=pool[:N], output_final_state=True, **kw)

    runner.forget_eager()
    pool0 = torch.randn(S, H, D, D, device="cuda", generator=gen) * 0.1
    fast_pool, full_pool = pool0.clone(), pool0.clone()
    sizes = [4, 4, 3, 7, 1, 3, 5, 2, 2, 9, 64, 4, 1, 33, 70, 7]
    for N in sizes:
        tokens = torch.randint(1, 3, (N,), generator=cpu_gen) if form == "varlen" else torch.ones(N, dtype=torch.int64)
        cu = torch.nn.functional.pad(tokens.cumsum(0), (1, 0)).to(device="cuda", dtype=torch.int32)
        q, k, v, g, beta, idx = inputs(N, int(tokens.sum()))
        o_fast, s_fast = call(N, fast_pool, q, k, v, g, beta, idx, cu)
        monkeypatch.setenv("KIMIOPS_DEBUG", "1")  # debug mode never takes the shortcut
        o_full, s_full = call(N, full_pool, q, k, v, g, beta, idx, cu)
        monkeypatch.delenv("KIMIOPS_DEBUG")
        assert torch.equal(o_fast, o_full), N
        if form == "dense":
            assert torch.equal(s_fast, s_full), N
        else:
            assert torch.equal(fast_pool, full_pool), N
    assert sum(replays) >= 4, replays  # new sizes of a recorded config replayed
    assert _eager_entries() >= 4  # sizes that came back found their exact entries


def test_public_calls_with_options_drawn_together_match_the_recurrence(device, monkeypatch):
    """A run of ``benchmarks/tools/fuzz_public_ops.py``: public ``chunk_kda`` / ``fused_recurrent_kda``
    calls whose options are drawn together (head dims, GVA, batch and varlen layouts with empty
    sequences, the three gate modes, L2 norm, beta logits and ``allow_neg_eigval``, dense states and
    pools with padding and ``pad_slot_id=0``, both state layouts, vLLM's speculative decode, g and beta
    in fp32 beside half inputs, strided views of fused projections, prefill state snapshots), each with
    both backends against the fp64 recurrence; pool slots a call may not write stay bit-identical
    (poisoned with NaN). On the GPU also head dims up to 256, bf16 inputs and bf16 decode pools."""
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[2] / "benchmarks" / "tools"))
    import fuzz_public_ops

    cuda = device.type == "cuda"
    # on the GPU most of the time is Triton compiling the calls' specializations (seconds each): 16 calls
    # there too; benchmarks/tools/fuzz_public_ops.py --device cuda runs more
    calls, seed, big_dims = 16, 8, (0.25 if cuda else 0.0)
    drawn = [fuzz_public_ops.draw_call(fuzz_public_ops.Draw(seed * 100003 + i), big_dims, cuda) for i in range(calls)]
    assert {c["gate"] for c in drawn} == {"precomputed", "softplus", "lower_bound"}
    assert any(c["spec"] for c in drawn) and any(c["pad_slot_id"] == 0 for c in drawn)
    assert any(0 in c["lens"] for c in drawn) and {c["state"] for c in drawn} == {"none", "dense", "pool"}
    assert any(c["fused"] for c in drawn) and any(c["g_dtype"] != c["dtype"] for c in drawn)
    assert any(c["track"] and max(c["lens"]) >= 64 for c in drawn)
    report = []
    assert fuzz_public_ops.fuzz(calls, seed, big_dims=big_dims, device=device, out=report.append) == 0, report[:3]


def test_valid_calls_with_one_argument_made_wrong_raise_errors_naming_it(device, monkeypatch):
    """A run of ``benchmarks/tools/fuzz_bad_inputs.py``: calls drawn as the test above draws them,
    each with one argument made wrong (shapes, dtypes, strides, gate arguments, ``cu_seqlens``, pools,
    indices, accepted counts, snapshots), raise ``ValueError`` / ``TypeError`` starting with that
    argument's name (value checks under ``KIMIOPS_DEBUG=1``); every mutation runs."""
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[2] / "benchmarks" / "tools"))
    import fuzz_bad_inputs

    report = []
    failed, counts = fuzz_bad_inputs.fuzz(400, seed=3, device=device, out=report.append)
    assert failed == 0, report[:3]
    assert min(counts.values()) > 0, counts


def test_public_calls_traced_by_torch_compile_give_the_eager_bits(device, monkeypatch):
    """``fuzz_public_ops.py --compile``: calls of mixed options (a dense state, a pool with snapshots,
    speculative decode, fused-projection views) traced by ``torch.compile(fullgraph=True)``, so the
    custom ops' fake implementations set every shape and stride, give the eager call's bits in o,
    the final state, the pool and the snapshots (besides matching the recurrence)."""
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[2] / "benchmarks" / "tools"))
    import fuzz_public_ops

    cuda = device.type == "cuda"
    drawn = [fuzz_public_ops.draw_call(fuzz_public_ops.Draw(5 * 100003 + i), 0.0, cuda) for i in range(5)]
    assert any(c["spec"] for c in drawn) and any(c["track"] and c["state"] == "pool" for c in drawn)
    report = []
    assert fuzz_public_ops.fuzz(5, 5, device=device, compiled=True, out=report.append) == 0, report[:3]
