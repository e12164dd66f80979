"""The Triton recurrent (decode) kernel against the fp64 token recurrence.

CPU: the kernel runs in Triton's interpreter (``TRITON_INTERPRET=1``, set by tests/conftest.py),
fp32/fp16 inputs, small shapes. GPU (``gpu`` marker): bf16 at real shapes (H=32, K=V=128).

Every case: fresh random inputs, the reference computed on fp64 copies after the same
preprocessing (``kimiops.kda.gate``), output and pool poisoned (NaN) before the call, untouched
pool slots compared bit for bit afterwards.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest
import torch

from kimiops.kda.gate import kda_gate, l2norm
from kimiops.kda.kernels.recurrent import (
    _CONFIGS,
    CONFIG_CANDIDATES,
    TileConfig,
    recurrent_kda_fwd,
    recurrent_kda_fwd_config,
)
from kimiops.kda.reference import naive_recurrent_kda
from kimiops.testing import rel_err
from decode_reduction_ptx import reduction_stores  # this directory (pytest prepends it to sys.path)

HAS_CUDA = torch.cuda.is_available()
CPU = torch.device("cpu")


def _bits(t: torch.Tensor) -> torch.Tensor:
    """Bit pattern of a float tensor (NaN-safe equality)."""
    return t.view({torch.float32: torch.int32, torch.bfloat16: torch.int16, torch.float16: torch.int16}[t.dtype])


def _make_inputs(gen, *, B, T, H, HV, K, V, dtype, gate, l2, sig, device, qk_view=False, lb=-5.0, dt_bias=True):
    """Raw kernel inputs and the fp64 preprocessed copies the oracle takes."""
    def rn(*s, scale=1.0):
        return torch.randn(*s, generator=gen, dtype=torch.float64) * scale

    if qk_view:  # q, k as strided views into one fused projection (non-contiguous)
        fused = rn(B, T, 2 * H + 1, K)
        q_raw, k_raw = fused[:, :, :H], fused[:, :, H + 1:]
    else:
        q_raw, k_raw = rn(B, T, H, K), rn(B, T, H, K)
    if not l2:  # the op expects unit-norm q, k when it does not normalize them itself
        q_raw, k_raw = l2norm(q_raw), l2norm(k_raw)
    v = rn(B, T, HV, V)
    b_raw = rn(B, T, HV) if sig else torch.rand(B, T, HV, generator=gen, dtype=torch.float64) * 0.9 + 0.05
    gate_args = {"A_log": None, "dt_bias": None, "lower_bound": None}
    if gate == "none":
        g_raw = -torch.rand(B, T, HV, K, generator=gen, dtype=torch.float64) * 0.2
    elif gate == "softplus":  # Kimi-Linear-like: exp(A_log) in [1, 200], per-step |g| up to ~3e3
        gate_args["A_log"] = torch.log(torch.rand(HV, generator=gen, dtype=torch.float64) * 199 + 1)
        gate_args["dt_bias"] = rn(HV * K) if dt_bias else None
        g_raw = rn(B, T, HV, K, scale=5.0)
    elif gate == "lower_bound":
        gate_args["A_log"] = rn(HV)
        gate_args["dt_bias"] = rn(HV * K) if dt_bias else None
        gate_args["lower_bound"] = lb
        g_raw = rn(B, T, HV, K, scale=3.0)
    elif gate == "lower_bound_noA":
        gate_args["dt_bias"] = rn(HV * K) if dt_bias else None
        gate_args["lower_bound"] = lb
        g_raw = rn(B, T, HV, K, scale=3.0)
    else:
        raise ValueError(gate)
    # the kernel's inputs, rounded to the test dtype; the oracle sees exactly these values
    q_in = q_raw.to(dtype)
    k_in = k_raw.to(dtype)
    if qk_view:
        fused_in = torch.empty(B, T, 2 * H + 1, K, dtype=dtype)
        fused_in[:, :, :H], fused_in[:, :, H + 1:] = q_in, k_in
        q_in, k_in = fused_in[:, :, :H], fused_in[:, :, H + 1:]
    v_in, b_in = v.to(dtype), b_raw.to(dtype)
    g_in = g_raw.to(torch.float32 if gate == "none" else dtype)
    A_log = None if gate_args["A_log"] is None else gate_args["A_log"].float()
    dtb = None if gate_args["dt_bias"] is None else gate_args["dt_bias"].float()

    q64, k64 = q_in.double(), k_in.double()
    if l2:
        q64, k64 = l2norm(q64), l2norm(k64)
    b64 = torch.sigmoid(b_in.double()) if sig else b_in.double()
    if gate == "none":
        g64 = g_in.double()
    else:
        g64 = kda_gate(
            g_in.double(), None if A_log is None else A_log.double(), None if dtb is None else dtb.double(),
            gate_args["lower_bound"], output_dtype=torch.float64,
        )
    kernel_gate = {"none": "none", "softplus": "softplus"}.get(gate, "lower_bound")
    mv = lambda t: None if t is None else t.to(device)  # noqa: E731
    kern = dict(
        q=_to_dev_view(q_in, device) if qk_view else q_in.to(device),
        k=_to_dev_view(k_in, device) if qk_view else k_in.to(device),
        v=v_in.to(device), g=g_in.to(device), beta=b_in.to(device),
        gate=kernel_gate, A_log=mv(A_log), dt_bias=mv(dtb), lower_bound=gate_args["lower_bound"],
        use_qk_l2norm=l2, use_beta_sigmoid=sig,
    )
    ref = (q64, k64, v_in.double(), g64, b64)
    return kern, ref


def _to_dev_view(x_view, device):
    """Move a strided view to ``device`` keeping it a view of a moved base."""
    if device.type == "cpu":
        return x_view
    base = x_view._base if x_view._base is not None else x_view
    moved = base.to(device)
    return moved.as_strided(x_view.shape, x_view.stride(), x_view.storage_offset())


def run_case(
    *, seqlens=None, B=1, T=None, H=2, HV=4, K=32, V=32, dtype=torch.float32, gate="softplus", l2=True, sig=True,
    v_first=True, mode="pool", slots=None, indices=None, skip_padded=True, pool_dtype=torch.float32,
    use_out=False, tail=0, device=CPU, seed=0, tol_o=None, tol_s=None, config=None, qk_view=False, lb=-5.0,
    dt_bias=True, scale=None,
):
    """Run the kernel once and check it. Returns a dict of errors.

    mode:
        "pool": ``h0 = ht = pool`` with ``indices`` (-1 = padding), in place.
        "pool2": ``h0 = pool`` read with ``indices``, ``ht = out_pool`` written with ``indices[::-1]``.
        "dense": ``h0 [N, ...]``, ``ht [N, ...]`` separate, no indices.
        "h0_only", "ht_only", "none": one side or no state.
    """
    gen = torch.Generator().manual_seed(seed)
    varlen = seqlens is not None
    if varlen:
        B, T_tot, N = 1, sum(seqlens) + tail, len(seqlens)
        cu = torch.tensor([0] + list(torch.tensor(seqlens).cumsum(0).tolist()), dtype=torch.int32)
    else:
        T_tot, N, cu = T, B, None
    kern, ref = _make_inputs(gen, B=B, T=T_tot, H=H, HV=HV, K=K, V=V, dtype=dtype, gate=gate, l2=l2, sig=sig,
                             device=device, qk_view=qk_view, lb=lb, dt_bias=dt_bias)
    scale = K ** -0.5 if scale is None else scale
    sshape = (HV, V, K) if v_first else (HV, K, V)

    def rand_states(n):
        return (torch.randn(n, *sshape, generator=gen, dtype=torch.float64) * 0.5).to(pool_dtype)

    h0 = ht = h0_idx = ht_idx = None
    if mode in ("pool", "pool2"):
        slots = slots or (2 * N + 3)
        if indices is None:
            indices = torch.randperm(slots, generator=gen)[:N].tolist()
        idx = torch.tensor(indices, dtype=torch.int32)
        pool = rand_states(slots)
        poisoned = torch.ones(slots, dtype=torch.bool)
        poisoned[[i for i in indices if i >= 0]] = False
        pool[poisoned] = float("nan")  # slots nobody reads must stay bit-identical
        pool_before = pool.clone()
        h0, h0_idx = pool.to(device), idx.to(device)
        if mode == "pool":
            ht, ht_idx = h0, h0_idx
            write_idx = indices
        else:
            write_idx = [indices[N - 1 - n] for n in range(N)]
            ht = torch.full((slots, *sshape), float("nan"), dtype=pool_dtype).to(device)
            ht_idx = torch.tensor(write_idx, dtype=torch.int64).to(device)
            ht_before = ht.cpu().clone()
        read_idx = indices
    elif mode in ("dense", "h0_only"):
        h0 = rand_states(N).to(device)
        read_idx = list(range(N))
        write_idx = list(range(N))
        if mode == "dense":
            ht = torch.full((N, *sshape), float("nan"), dtype=pool_dtype).to(device)
    elif mode == "ht_only":
        ht = torch.full((N, *sshape), float("nan"), dtype=pool_dtype).to(device)
        read_idx, write_idx = [-1] * N, list(range(N))
    elif mode == "none":
        read_idx, write_idx = [-1] * N, [-1] * N
    else:
        raise ValueError(mode)

    # oracle: initial states (zeros for -1 / no h0), fp64
    init = torch.zeros(N, *sshape, dtype=torch.float64)
    h0_cpu = None if h0 is None else h0.cpu()
    for n, i in enumerate(read_idx):
        if i >= 0 and h0_cpu is not None:
            init[n] = h0_cpu[i].double()
    o_ref, s_ref = naive_recurrent_kda(*ref, scale=scale, initial_state=init, output_final_state=True,
                                       cu_seqlens=cu, state_v_first=v_first)
    # sequences the kernel skips (decode semantics)
    pad = [False] * N
    if skip_padded:
        for n in range(N):
            r = h0_idx is not None and read_idx[n] < 0
            w = ht_idx is not None and write_idx[n] < 0
            pad[n] = r or w
    bounds = cu.tolist() if varlen else None
    for n in range(N):
        if pad[n]:
            if varlen:
                o_ref[0, bounds[n]:bounds[n + 1]] = 0
            else:
                o_ref[n] = 0

    out = None
    if use_out:
        out = torch.full((B, T_tot, HV, V), float("nan"), dtype=kern["v"].dtype, device=device)
    kw = dict(
        scale=scale, cu_seqlens=None if cu is None else cu.to(device), h0=h0, h0_indices=h0_idx, ht=ht,
        ht_indices=ht_idx, state_v_first=v_first, skip_padded=skip_padded, out=out,
        use_qk_l2norm=kern["use_qk_l2norm"], use_beta_sigmoid=kern["use_beta_sigmoid"], gate=kern["gate"],
        A_log=kern["A_log"], dt_bias=kern["dt_bias"], lower_bound=kern["lower_bound"],
    )
    args = (kern["q"], kern["k"], kern["v"], kern["g"], kern["beta"])
    if config is None:
        o = recurrent_kda_fwd(*args, **kw)
    else:
        cfg = TileConfig(*config)
        o = recurrent_kda_fwd_config(cfg.block_v, cfg.num_warps, *args, stream_hints=cfg.stream_hints,
                                     early_inputs=cfg.early_inputs, wait_first=cfg.wait_first, **kw)
    if use_out:
        assert o is out
    assert o.shape == (B, T_tot, HV, V) and o.dtype == kern["v"].dtype
    o_cpu = o.cpu()
    assert not torch.isnan(o_cpu).any(), "NaN in the output"
    errs = {"o": rel_err(o_cpu, o_ref)}
    lowp = dtype != torch.float32
    tol_o = tol_o if tol_o is not None else (2e-3 if lowp else 1e-4)
    tol_s = tol_s if tol_s is not None else (1e-4 if pool_dtype == torch.float32 else 5e-3)
    assert errs["o"] < tol_o, errs
    # padded rows: exactly zero
    for n in range(N):
        if pad[n]:
            rows = o_cpu[0, bounds[n]:bounds[n + 1]] if varlen else o_cpu[n]
            assert (rows == 0).all()
    if tail:
        assert (o_cpu[0, T_tot - tail:] == 0).all()

    # states
    if ht is not None:
        ht_cpu = ht.cpu()
        base = pool_before if mode == "pool" else (ht_before if mode == "pool2" else None)
        written = set()
        worst = 0.0
        for n in range(N):
            w = write_idx[n]
            if w < 0 or pad[n]:
                continue
            written.add(w)
            worst = max(worst, rel_err(ht_cpu[w], s_ref[n]) if s_ref[n].norm() > 0 else ht_cpu[w].abs().max().item())
        errs["state"] = worst
        assert worst < tol_s, errs
        if base is not None:
            untouched = [s for s in range(ht_cpu.shape[0]) if s not in written]
            for s in untouched:
                assert torch.equal(_bits(ht_cpu[s]), _bits(base[s])), f"slot {s} was touched"
    if mode == "pool2":  # the read pool must not change at all
        assert torch.equal(_bits(h0.cpu()), _bits(pool_before))
    return errs


# ---------------------------------------------------------------- CPU (interpreter) and GPU alike
GATES = ["none", "softplus", "lower_bound", "lower_bound_noA"]


@pytest.mark.parametrize("gate", GATES)
@pytest.mark.parametrize("v_first", [True, False])
def test_gates_layouts_varlen_pool(gate, v_first, device):
    # zero-length and multi-token sequences, one padded (-1) sequence, poisoned pool
    run_case(seqlens=[2, 0, 3, 1], indices=[5, 1, -1, 8], gate=gate, v_first=v_first, device=device,
             seed=GATES.index(gate) + 10 * v_first)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_dtypes_gva(dtype, device):
    run_case(seqlens=[1, 3, 2], H=2, HV=4, dtype=dtype, device=device, seed=3)
    run_case(seqlens=[2, 2], H=1, HV=4, dtype=dtype, device=device, seed=4, v_first=False)


def test_large_softplus_gates_stay_finite(device):
    # exp(A_log) up to 200, raw logits scaled so per-step |g| reaches ~3e3: exp(g) underflows to 0
    errs = run_case(seqlens=[4, 1], gate="softplus", device=device, seed=11)
    assert math.isfinite(errs["o"])


def test_lower_bound_gate_without_dt_bias(device):
    run_case(seqlens=[3, 2], gate="lower_bound", dt_bias=False, lb=-0.5, device=device, seed=12)


def test_batched_not_varlen(device):
    run_case(B=3, T=3, mode="dense", device=device, seed=13)
    run_case(B=2, T=2, mode="pool", indices=[4, -1], device=device, seed=14, v_first=False)


def test_skip_padded_false_starts_from_zeros_and_writes_nothing(device):
    run_case(seqlens=[2, 3, 1], indices=[-1, 3, -1], skip_padded=False, device=device, seed=15)
    run_case(seqlens=[2, 1], indices=[0, -1], skip_padded=False, mode="pool2", device=device, seed=16)


def test_padded_inputs_garbage_do_not_leak(device):
    """Decode padding rows may hold anything (CUDA-graph padding): outputs stay exactly zero."""
    gen = torch.Generator().manual_seed(17)
    N, H, HV, K, V = 3, 2, 4, 32, 32
    q = torch.randn(1, N, H, K, generator=gen).to(device)
    k = torch.randn(1, N, H, K, generator=gen).to(device)
    v = torch.randn(1, N, HV, V, generator=gen).to(device)
    g = torch.randn(1, N, HV, K, generator=gen).to(device)
    beta = torch.randn(1, N, HV, generator=gen).to(device)
    for t in (q, k, v, g, beta):
        t[0, 1] = float("nan")  # request 1 is padding
    pool = torch.randn(4, HV, V, K, generator=gen).to(device)
    before = pool.clone()
    idx = torch.tensor([2, -1, 0], dtype=torch.int32, device=device)
    o = recurrent_kda_fwd(
        q, k, v, g, beta, scale=K ** -0.5, cu_seqlens=torch.arange(N + 1, dtype=torch.int32, device=device),
        h0=pool, h0_indices=idx, ht=pool, ht_indices=idx, state_v_first=True, use_qk_l2norm=True,
        use_beta_sigmoid=True, gate="softplus", A_log=torch.zeros(HV, device=device), dt_bias=None,
        lower_bound=None, skip_padded=True,
    )
    assert (o[0, 1] == 0).all() and not torch.isnan(o).any()
    assert torch.equal(pool[[1, 3]], before[[1, 3]])
    assert torch.isfinite(pool).all()


@pytest.mark.parametrize("mode", ["dense", "pool2", "h0_only", "ht_only", "none"])
def test_state_modes(mode, device):
    run_case(seqlens=[2, 0, 1], indices=[3, 0, 5], mode=mode, device=device, seed=18)


def test_out_argument_and_tail_rows(device):
    # rows past cu_seqlens[-1] (graph padding) are zero-filled; out is returned as is
    run_case(seqlens=[1, 2, 0], indices=[1, 4, 2], use_out=True, tail=3, device=device, seed=19)
    run_case(B=2, T=2, mode="dense", use_out=True, device=device, seed=20)


def test_strided_qk_views(device):
    run_case(seqlens=[2, 1], qk_view=True, device=device, seed=21)


def test_uneven_k_v(device):
    run_case(seqlens=[2, 1], K=24, V=40, config=(16, 2), device=device, seed=22)


@pytest.mark.parametrize("v_first", [True, False])
def test_head_dims_256(device, v_first):
    """K = V = 256 with the config table's own tiles (the chunked prefill takes 256 too)."""
    run_case(seqlens=[1, 3, 1], indices=[2, -1, 0], H=1, HV=2, K=256, V=256, v_first=v_first, device=device,
             seed=23)
    run_case(seqlens=[1, 2], K=24, V=40, config=(16, 2), v_first=False, device=device, seed=23)


@pytest.mark.parametrize("config", [(8, 1), (16, 2), (32, 4), (64, 8)])
def test_configs(config, device):
    run_case(seqlens=[2, 1, 1], config=config, device=device, seed=24)


def test_all_sequences_empty_copies_or_keeps_states(device):
    run_case(seqlens=[0, 0], mode="dense", device=device, seed=25)
    run_case(seqlens=[0, 0], indices=[1, 3], device=device, seed=26)


def test_no_sequences(device):
    q = torch.randn(1, 0, 2, 32, device=device)
    v = torch.randn(1, 0, 4, 32, device=device)
    o = recurrent_kda_fwd(
        q, q, v, torch.zeros(1, 0, 4, 32, device=device), torch.zeros(1, 0, 4, device=device), scale=1.0,
        cu_seqlens=torch.zeros(1, dtype=torch.int32, device=device), h0=None, h0_indices=None, ht=None,
        ht_indices=None, state_v_first=True, use_qk_l2norm=False, use_beta_sigmoid=False, gate="none",
        A_log=None, dt_bias=None, lower_bound=None, skip_padded=True,
    )
    assert o.shape == (1, 0, 4, 32)


# ---------------------------------------------------------------- GPU only: bf16, real shapes
GPU = torch.device("cuda") if HAS_CUDA else None


@pytest.mark.gpu
@pytest.mark.parametrize("gate", ["softplus", "lower_bound", "none"])
@pytest.mark.parametrize("v_first", [True, False])
@pytest.mark.parametrize("pool_dtype", [torch.float32, torch.bfloat16])
def test_gpu_bf16_real_shapes(gate, v_first, pool_dtype):
    run_case(seqlens=[1, 3, 0, 1, 2, 1, 1, 4], indices=[7, 2, 11, -1, 0, 5, 13, 9], H=32, HV=32, K=128, V=128,
             dtype=torch.bfloat16, gate=gate, v_first=v_first, pool_dtype=pool_dtype, device=GPU, slots=16,
             tol_o=5e-3, tol_s=5e-3, seed=31)


@pytest.mark.gpu
def test_gpu_gva_decode_batch():
    # one token per request, GVA 2, like a padded decode batch
    run_case(seqlens=[1] * 16, indices=list(range(0, 30, 2))[:15] + [-1], H=16, HV=32, K=128, V=128,
             dtype=torch.bfloat16, device=GPU, slots=40, tol_o=5e-3, tol_s=5e-3, seed=32)


@pytest.mark.gpu
@pytest.mark.parametrize("config", CONFIG_CANDIDATES)
def test_gpu_every_config_candidate(config):
    run_case(seqlens=[1, 2, 1, 3], indices=[3, 1, -1, 6], H=32, HV=32, K=128, V=128, dtype=torch.bfloat16,
             device=GPU, slots=8, tol_o=5e-3, tol_s=5e-3, config=config, seed=33)
    run_case(seqlens=[1, 2], indices=[3, 1], H=32, HV=32, K=128, V=128, dtype=torch.bfloat16, v_first=False,
             device=GPU, slots=8, tol_o=5e-3, tol_s=5e-3, config=config, seed=34)


@pytest.mark.gpu
@pytest.mark.parametrize("config", sorted({cfg for rows in _CONFIGS.values() for _, cfg in rows}))
def test_gpu_every_table_config(config):
    """The configs of both tables (the cu_seqlens form's and batch mode's), stream hints, early
    first-token loads and the PDL order included (they change the cache policy and the order of
    loads and launches, not the results), in both forms of the call."""
    run_case(seqlens=[1, 2, 1, 3], indices=[3, 1, -1, 6], H=32, HV=32, K=128, V=128, dtype=torch.bfloat16,
             device=GPU, slots=8, tol_o=5e-3, tol_s=5e-3, config=config, seed=35)
    run_case(seqlens=[1, 2], indices=[3, 1], H=32, HV=32, K=128, V=128, dtype=torch.bfloat16, v_first=False,
             device=GPU, slots=8, tol_o=5e-3, tol_s=5e-3, config=config, seed=36)
    run_case(B=4, T=1, indices=[3, -1, 1, 6], H=32, HV=32, K=128, V=128, dtype=torch.bfloat16, device=GPU,
             slots=8, tol_o=5e-3, tol_s=5e-3, config=config, seed=38)


@pytest.mark.gpu
@pytest.mark.parametrize("wait_first", [False, True], ids=["release_first", "wait_first"])
def test_gpu_chained_steps_both_pdl_orders(wait_first):
    """Eight decode steps on the same pool slots launched back to back (eager, then replayed from a
    CUDA graph), where each grid may be scheduled before the previous one ends: the bits of the same
    steps with a host sync after each, in either order of the PDL wait and release."""
    gen = torch.Generator(device="cuda").manual_seed(42)
    N, H, K, V, steps = 2, 32, 128, 128, 8
    mk = lambda *s: torch.randn(*s, generator=gen, device="cuda").to(torch.bfloat16)  # noqa: E731
    xs = [(mk(N, 1, H, K), mk(N, 1, H, K), mk(N, 1, H, V), mk(N, 1, H, K), mk(N, 1, H)) for _ in range(steps)]
    A_log = torch.randn(H, generator=gen, device="cuda")
    dt_bias = torch.randn(H * K, generator=gen, device="cuda")
    idx = torch.tensor([5, 2], dtype=torch.int32, device="cuda")
    pool0 = torch.randn(8, H, V, K, generator=gen, device="cuda") * 0.1

    def step(pool, x):
        return recurrent_kda_fwd_config(
            8, 1, *x, scale=K ** -0.5, cu_seqlens=None, h0=pool, h0_indices=idx, ht=pool, ht_indices=idx,
            state_v_first=True, use_qk_l2norm=True, use_beta_sigmoid=True, gate="softplus", A_log=A_log,
            dt_bias=dt_bias, lower_bound=None, skip_padded=True, wait_first=wait_first)

    ref_pool = pool0.clone()
    ref = []
    for x in xs:
        ref.append(step(ref_pool, x))
        torch.cuda.synchronize()
    pool = pool0.clone()
    outs = [step(pool, x) for x in xs]
    torch.cuda.synchronize()
    assert all(torch.equal(_bits(a), _bits(b)) for a, b in zip(outs, ref))
    assert torch.equal(_bits(pool), _bits(ref_pool))

    pool.copy_(pool0)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        outs = [step(pool, x) for x in xs]
    pool.copy_(pool0)
    graph.replay()
    torch.cuda.synchronize()
    assert all(torch.equal(_bits(a), _bits(b)) for a, b in zip(outs, ref))
    assert torch.equal(_bits(pool), _bits(ref_pool))


def test_early_inputs_interpreter(device):
    """The first token's inputs loaded before the state tile: batch mode (its table's form; empty
    sequences and padding too) and the cu_seqlens form."""
    run_case(B=3, T=2, indices=[4, -1, 1], config=(16, 2, False, True), device=device, seed=39)
    run_case(B=2, T=1, mode="dense", config=(8, 1, True, True), v_first=False, device=device, seed=40)
    run_case(seqlens=[2, 0, 1], config=(16, 2, False, True), device=device, seed=41)


def test_config_tables_cover_every_batch_size():
    """Each form's table answers every N * HV with a TileConfig of a kernel candidate."""
    from kimiops.kda.kernels.recurrent import config_for

    for varlen in (True, False):
        for nh in (1, 32, 33, 64, 65, 128, 129, 256, 257, 2048, 2049, 1 << 20):
            cfg = config_for(nh, varlen)
            assert isinstance(cfg, TileConfig) and (cfg.block_v, cfg.num_warps) in CONFIG_CANDIDATES
            assert all(isinstance(f, bool) for f in cfg[2:])


def test_stream_hints_interpreter():
    run_case(seqlens=[2, 1], K=24, V=40, config=(16, 2, True), seed=37)


@pytest.mark.gpu
def test_gpu_fast_launch_matches_jit_path():
    """The cached fast launch (2nd call on) computes bit-identical results to Triton's own launch."""
    import kimiops.launch as fast_launch
    from kimiops.kda.kernels import recurrent as rec

    gen = torch.Generator(device="cuda").manual_seed(35)
    N, H, HV, K, V = 5, 32, 32, 128, 128
    mk = lambda *s: torch.randn(*s, generator=gen, device="cuda").to(torch.bfloat16)  # noqa: E731
    q, k, v, g, beta = mk(1, N, H, K), mk(1, N, H, K), mk(1, N, HV, V), mk(1, N, HV, K), mk(1, N, HV)
    A_log = torch.rand(HV, device="cuda") * 5
    dt_bias = torch.randn(HV * K, device="cuda")
    pool0 = torch.randn(12, HV, V, K, generator=gen, device="cuda")
    idx = torch.tensor([3, 7, -1, 0, 10], dtype=torch.int32, device="cuda")
    cu = torch.arange(N + 1, dtype=torch.int32, device="cuda")

    def call(pool):
        return rec.recurrent_kda_fwd(
            q, k, v, g, beta, scale=K ** -0.5, cu_seqlens=cu, h0=pool, h0_indices=idx, ht=pool, ht_indices=idx,
            state_v_first=True, use_qk_l2norm=True, use_beta_sigmoid=True, gate="softplus", A_log=A_log,
            dt_bias=dt_bias, lower_bound=None, skip_padded=True,
        )

    saved = fast_launch.FAST_LAUNCH
    try:
        fast_launch.FAST_LAUNCH = False
        p_ref = pool0.clone()
        o_ref = call(p_ref)
        fast_launch.FAST_LAUNCH = True
        outs = []
        for _ in range(3):  # first call may compile + cache, the next ones take the fast path
            p = pool0.clone()
            outs.append((call(p), p))
        torch.cuda.synchronize()
    finally:
        fast_launch.FAST_LAUNCH = saved
    for o, p in outs:
        assert torch.equal(o, o_ref) and torch.equal(p, p_ref)


@pytest.mark.gpu
def test_gpu_cuda_graph_replay_with_new_inputs():
    N, H, HV, K, V = 8, 32, 32, 128, 128
    dev = "cuda"
    q = torch.zeros(1, N, H, K, dtype=torch.bfloat16, device=dev)
    k, g = torch.zeros_like(q), torch.zeros(1, N, HV, K, dtype=torch.bfloat16, device=dev)
    v = torch.zeros(1, N, HV, V, dtype=torch.bfloat16, device=dev)
    beta = torch.zeros(1, N, HV, dtype=torch.bfloat16, device=dev)
    idx = torch.zeros(N, dtype=torch.int32, device=dev)
    cu = torch.arange(N + 1, dtype=torch.int32, device=dev)
    A_log = torch.rand(HV, device=dev) * 3
    pool = torch.randn(20, HV, V, K, device=dev)
    kw = dict(scale=K ** -0.5, cu_seqlens=cu, h0=pool, h0_indices=idx, ht=pool, ht_indices=idx, state_v_first=True,
              use_qk_l2norm=True, use_beta_sigmoid=True, gate="softplus", A_log=A_log, dt_bias=None,
              lower_bound=None, skip_padded=True)
    out = torch.empty(1, N, HV, V, dtype=torch.bfloat16, device=dev)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        recurrent_kda_fwd(q, k, v, g, beta, out=out, **kw)  # compile / cache outside the capture
    torch.cuda.current_stream().wait_stream(s)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        recurrent_kda_fwd(q, k, v, g, beta, out=out, **kw)
    for rep in range(2):
        for t in (q, k, v, g, beta):
            t.copy_(torch.randn(t.shape, device=dev))
        idx.copy_(torch.randperm(20, device=dev)[:N].to(torch.int32))
        idx[3] = -1
        pool_eager = pool.clone()
        kw_e = dict(kw, h0=pool_eager, ht=pool_eager)
        o_eager = recurrent_kda_fwd(q, k, v, g, beta, **kw_e)
        graph.replay()
        torch.cuda.synchronize()
        assert torch.equal(out, o_eager) and torch.equal(pool, pool_eager)


def test_bound_launch_passes_addresses_in_kernel_order(cuda_queries):
    """``BoundLaunch`` (the eager decode shortcut) hands the raw launch every tensor's address in
    the kernel's parameter order, a new contiguous ``o`` shaped like v, and the bound scalars; run
    on CPU tensors with the CUDA queries stubbed (the launch itself runs in the GPU tests)."""
    from kimiops.kda.kernels import recurrent as rec

    calls = []
    q, k, g = (torch.randn(1, 2, 3, 8) for _ in range(3))
    v = torch.randn(1, 2, 3, 4, 2)[..., 0]  # strided v: o must still come out contiguous
    beta, pool, idx, cu = torch.randn(1, 2, 3), torch.zeros(5, 3, 4, 8), torch.zeros(2, dtype=torch.int32), \
        torch.arange(3, dtype=torch.int32)
    A_log, dt_bias = torch.zeros(3), torch.zeros(24)
    raw = types.SimpleNamespace(entry=lambda *a: calls.append(a), head=("fn", "meta"))  # a RawLaunch's call layout
    acc = torch.ones(2, dtype=torch.int32)
    for gate in (True, False):
        for num_acc in (None, acc):
            bound = rec.BoundLaunch(raw, 48, (0.5, "tail"), 0, gate, True, True)
            o = bound(q, k, v, g, beta, pool, idx, pool, idx, cu, A_log, dt_bias, num_acc)
            assert o.shape == v.shape and o.dtype == v.dtype and o.is_contiguous()
            want = (48, 1, 1, 77, "fn", "meta", q.data_ptr(), k.data_ptr(), v.data_ptr(), g.data_ptr(),
                    beta.data_ptr(), o.data_ptr(), pool.data_ptr(), pool.data_ptr(), idx.data_ptr(), idx.data_ptr(),
                    cu.data_ptr(), A_log.data_ptr() if gate else None, dt_bias.data_ptr() if gate else None,
                    None if num_acc is None else num_acc.data_ptr(), None, 0.5, "tail")  # None: no tree parents
            assert calls[-1] == want
    cuda_queries.device = 1  # another current device
    assert bound(q, k, v, g, beta, pool, idx, pool, idx, cu, A_log, dt_bias) is None


_BROKEN_REDUCTION = """
    shfl.sync.bfly.b32 %r123, %r113, 16, 31, -1;
    fma.rn.f32 %r124, %r46, %r151, %r123;
    shfl.sync.bfly.b32 %r125, %r124, 8, 31, -1;
    add.f32 %r126, %r124, %r125;
    bar.sync 0;
    st.shared.b32 [%r10], %r126;
"""


def test_reduction_store_detector():
    """``decode_reduction_ptx.reduction_stores`` finds the PTX of racecheck's hazard (a product fused into
    a butterfly step, then stored by every lane) and passes the same reduction with the product rounded
    first, a predicated store (one lane writes) and a store of values no shuffle reached."""
    assert reduction_stores(_BROKEN_REDUCTION) == (1, 1)
    rounded = _BROKEN_REDUCTION.replace("fma.rn.f32 %r124, %r46, %r151, %r123;",
                                        "mul.rn.f32 %r150, %r46, %r151;\n add.f32 %r124, %r150, %r123;")
    assert reduction_stores(rounded) == (1, 0)
    assert reduction_stores(_BROKEN_REDUCTION.replace("st.shared", "@%p3 st.shared")) == (0, 0)
    assert reduction_stores("mul.f32 %r2, %r1, %r1;\n st.shared.b32 [%r9], %r2;") == (0, 0)


def test_decode_reductions_store_equal_copies():
    """Offline sm_90 compile (no GPU), head dims 16-256, both state layouts, three tile configs, bf16 inputs
    with a pool and fp32 inputs without an initial state: no reduction whose copies every lane writes to
    shared memory takes a shuffled value into an FMA. Two did (racecheck's write-after-write hazards): o's
    at head dims of 16 (fifty-sixth session), and the error's at 16 and 32 with fp32 inputs, a V-first
    state and no initial state (fifty-seventh). Their products are now rounded first at head dims up to 32
    (``recurrent._ROUND_PRODUCTS_MAX_BK``)."""
    args = [f"{dim},{v_first},{n}{form}" for dim in (16, 32, 64, 128, 256) for v_first in (0, 1) for n in (1, 2, 4)
            for form in ("", ",fp32,none")]
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).resolve().parents[2]), env.get("PYTHONPATH", "")])
    run = subprocess.run([sys.executable, str(Path(__file__).with_name("decode_reduction_ptx.py")), *args],
                         capture_output=True, text=True, env=env, timeout=900)
    assert run.returncode == 0, run.stderr[-3000:]
    found = json.loads(run.stdout)
    assert {arg: fused for arg, (_, fused) in found.items() if fused} == {}
    assert sum(stores for stores, _ in found.values()) >= 6  # the detector saw the conversions it checks
