"""State snapshots inside a prefill call (``track_state`` / ``track_chunk_idx``, kimiops/kda/track.py).

A snapshot must be the state a prefix-cache hit resumes from: the final state of the same call
truncated at the boundary. CPU: the torch path and the kernels in Triton's interpreter (fp32), the
kernels also cut into pipelined parts and into segments; GPU (``gpu`` marker): bf16 at 32 heads
(parts) and 4 heads (segments).
"""

from __future__ import annotations

import pytest
import torch

import kimiops
from kimiops.kda import KDABackend
from kimiops.kda.kernels import chunk
from kimiops.testing import make_kda_inputs, rel_err

NAN = float("nan")
# the cuts of the state walk the kernels can take (PIPELINE_CONFIG overrides; the default rule takes
# one piece at these sizes)
CUTS = {
    "one": {},
    "parts": {"min_parts": 3, "max_parts": 3, "part_slots": 1, "min_part_slots": 1, "below_pairs": 10**9,
              "max_seqs": 10**9},
    "segments": {"segments": 5},
}


def bits(t):
    return t.contiguous().view(torch.int32)


def _varlen(lengths, H, K, V, HV, seed, dtype=torch.float32, device="cpu"):
    gen = torch.Generator().manual_seed(seed)
    x = make_kda_inputs(1, sum(lengths), H, K, V, HV=HV, gate="softplus", raw_gate=True, dtype=dtype,
                        device=device, generator=gen)
    cu = torch.tensor([0] + lengths, device=device).cumsum(0).to(torch.int32)
    return x, cu


def _prefix(x, lengths, keep):
    """The inputs of each sequence's first ``keep[n]`` tokens, and their cu_seqlens."""
    starts = [sum(lengths[:n]) for n in range(len(lengths))]
    rows = torch.cat([torch.arange(s, s + m) for s, m in zip(starts, keep)]).to(x.q.device)
    cut = [t[:, rows] for t in (x.q, x.k, x.v, x.g, x.beta)]
    return cut, torch.tensor([0] + keep, device=x.q.device).cumsum(0).to(torch.int32)


def _call(x, cu, h0, backend, state_v_first, **kw):
    return kimiops.chunk_kda(x[0], x[1], x[2], x[3], x[4], scale=0.3, initial_state=h0, output_final_state=True,
                             use_qk_l2norm_in_kernel=True, use_gate_in_kernel=True, use_beta_sigmoid_in_kernel=True,
                             state_v_first=state_v_first, cu_seqlens=cu, backend=backend, **x[5], **kw)


@pytest.mark.parametrize("state_v_first", [False, True], ids=["k-first", "v-first"])
@pytest.mark.parametrize("backend,cut", [("torch", "one"), ("triton", "one"), ("triton", "parts"),
                                         ("triton", "segments")])
def test_snapshot_is_the_final_state_of_the_truncated_call(monkeypatch, backend, cut, state_v_first):
    """Varlen pool call of 5 sequences (100, 0, 300, 64, 40 tokens; the third has pool index -1 and
    starts from zeros) asking for the states after 64, 0, 128 and 64 (its end) tokens and none for
    the last: each row is the final state of the call on those prefixes, bit for bit where the walk
    is the same (one piece, parts), to rounding in segments (chained maps); the rows of -1 and
    every untouched pool slot keep their NaN poison."""
    for key, val in CUTS[cut].items():
        monkeypatch.setitem(chunk.PIPELINE_CONFIG, key, val)
    lengths, keep = [100, 0, 300, 64, 40], [64, 0, 128, 64, 0]
    HV, K, V = 2, 32, 16
    x, cu = _varlen(lengths, 1, K, V, HV, seed=31)
    state = (HV, V, K) if state_v_first else (HV, K, V)
    gen = torch.Generator().manual_seed(32)
    pool = torch.full((7, *state), NAN)
    slots = torch.tensor([3, 0, -1, 5, 1], dtype=torch.int32)
    for s in (3, 0, 5, 1):
        pool[s] = torch.randn(*state, generator=gen) * 0.5
    h0 = torch.stack([pool[s] if s >= 0 else torch.zeros(state) for s in slots.tolist()])
    track = torch.full((5, *state), NAN)
    idx = torch.tensor([1, 0, 2, 1, -1], dtype=torch.int32)
    args = (x.q, x.k, x.v, x.g, x.beta, x.gate_kwargs)
    _call(args, cu, pool, backend, state_v_first, initial_state_indices=slots, track_state=track,
          track_chunk_idx=idx)
    cut_inputs, cu_cut = _prefix(x, lengths, keep)
    _, ht = _call((*cut_inputs, x.gate_kwargs), cu_cut, h0, backend, state_v_first)
    assert torch.isnan(track[4]).all()
    assert torch.equal(bits(track[1]), bits(h0[1]))  # the initial state, untouched by any walk
    assert torch.equal(bits(track[3]), bits(pool[5]))  # the sequence's end: its final state
    for n in (0, 2, 3):
        assert torch.isfinite(track[n]).all()
        if cut == "segments" or backend == "torch":  # torch: chunk batches of other sizes
            assert rel_err(track[n], ht[n]) < 1e-5
        else:
            assert torch.equal(bits(track[n]), bits(ht[n]))
    assert torch.isnan(pool[[2, 4, 6]]).all()


def test_torch_path_and_kernels_agree():
    """Fixed-length batch (B = 2, T = 200) in the default layout: the torch path and the kernels
    write the same snapshots (after 192 and 64 tokens) to the kernels' precision (fp16 scratch
    operands, ~2e-4 here), and asking for them changes no output bit."""
    gen = torch.Generator().manual_seed(33)
    x = make_kda_inputs(2, 200, 1, 16, 16, HV=2, gate="lower_bound", raw_gate=True, generator=gen)
    res = {}
    for backend in ("torch", "triton"):
        track = torch.full((2, 2, 16, 16), NAN)
        o, ht = kimiops.chunk_kda(x.q, x.k, x.v, x.g, x.beta, output_final_state=True, use_gate_in_kernel=True,
                                  backend=backend, track_state=track,
                                  track_chunk_idx=torch.tensor([3, 1], dtype=torch.int32), **x.gate_kwargs)
        o_plain, _ = kimiops.chunk_kda(x.q, x.k, x.v, x.g, x.beta, use_gate_in_kernel=True, backend=backend,
                                       **x.gate_kwargs)
        assert torch.equal(o, o_plain)
        res[backend] = track
    assert rel_err(res["triton"], res["torch"]) < 2e-3


@pytest.mark.parametrize("backend", ["torch", "triton"])
def test_backend_extend_snapshot_with_padding(backend):
    """``KDABackend.extend`` with a V-first pool, a padded request (index -1) and CUDA-graph padding
    rows: request 0's snapshot after 64 tokens is its pool slot after an extend of those 64 tokens
    alone; the padded request's row, asked for nothing, stays NaN."""
    gen = torch.Generator().manual_seed(34)
    H, HV, K, V = 1, 2, 16, 16
    lengths = [130, 20]
    x = make_kda_inputs(1, sum(lengths) + 6, H, K, V, HV=HV, gate="softplus", raw_gate=True, generator=gen)
    kw = dict(x.gate_kwargs)
    cu = torch.tensor([0, 130, 150], dtype=torch.int32)
    pool = torch.randn(4, HV, V, K, generator=gen) * 0.3
    start = pool.clone()
    be = KDABackend(H, K, V, HV, backend=backend)
    track = torch.full((2, HV, V, K), NAN)
    be.extend(x.q, x.k, x.v, x.g, x.beta, ssm_states=pool, cache_indices=torch.tensor([2, -1], dtype=torch.int32),
              query_start_loc=cu, track_state=track, track_chunk_idx=torch.tensor([1, -1], dtype=torch.int32), **kw)
    alone = start.clone()
    be.extend(x.q[:, :64], x.k[:, :64], x.v[:, :64], x.g[:, :64], x.beta[:, :64], ssm_states=alone,
              cache_indices=torch.tensor([2], dtype=torch.int32),
              query_start_loc=torch.tensor([0, 64], dtype=torch.int32),
              **kw)
    assert torch.isnan(track[1]).all()
    assert rel_err(track[0], alone[2]) < 1e-5
    assert torch.equal(pool[[0, 1, 3]], start[[0, 1, 3]])


def test_torch_compile_fullgraph_keeps_the_snapshot():
    x = make_kda_inputs(1, 70, 1, 16, 16)
    pool = torch.randn(3, 1, 16, 16)
    idx = torch.tensor([2], dtype=torch.int32)
    at = torch.tensor([1], dtype=torch.int32)

    def f(q, k, v, g, beta, pool, idx, track, at):
        o, _ = kimiops.chunk_kda(q, k, v, g, beta, initial_state=pool, initial_state_indices=idx, track_state=track,
                                 track_chunk_idx=at)
        return o * 2

    eager_pool, eager_track = pool.clone(), torch.zeros(1, 1, 16, 16)
    o_eager = f(x.q, x.k, x.v, x.g, x.beta, eager_pool, idx, eager_track, at)
    track = torch.zeros(1, 1, 16, 16)
    o_comp = torch.compile(f, fullgraph=True, backend="aot_eager")(x.q, x.k, x.v, x.g, x.beta, pool, idx, track, at)
    torch.testing.assert_close(o_comp, o_eager)
    torch.testing.assert_close(track, eager_track)  # the in-place snapshot survives compilation
    assert track.abs().sum() > 0


def _bad_track(mutate):
    x = make_kda_inputs(1, 100, 1, 16, 16, HV=2)
    kw = {"track_state": torch.zeros(2, 2, 16, 16), "track_chunk_idx": torch.tensor([1, 0], dtype=torch.int32),
          "cu_seqlens": torch.tensor([0, 64, 100], dtype=torch.int32)}
    mutate(kw)
    return lambda: kimiops.chunk_kda(x.q, x.k, x.v, x.g, x.beta, **kw)


@pytest.mark.parametrize("mutate,exc,match", [
    (lambda kw: kw.pop("track_chunk_idx"), ValueError, "track_chunk_idx: needed with track_state"),
    (lambda kw: kw.pop("track_state"), ValueError, "track_state: needed with track_chunk_idx"),
    (lambda kw: kw.update(track_state=torch.zeros(2, 2, 16, 16, dtype=torch.bfloat16)), TypeError,
     "track_state: expected dtype"),
    (lambda kw: kw.update(track_state=torch.zeros(3, 2, 16, 16)), ValueError,
     r"track_state: expected shape \[2, 2, 16, 16\]"),
    (lambda kw: kw.update(track_state=torch.zeros(2, 2, 16, 32)[..., ::2]), ValueError,
     "track_state: expected a contiguous"),
    (lambda kw: kw.update(track_chunk_idx=torch.tensor([1.0, 0.0])), TypeError, "track_chunk_idx: expected dtype"),
    (lambda kw: kw.update(track_chunk_idx=torch.tensor([1], dtype=torch.int32)), ValueError,
     r"track_chunk_idx: expected shape \[2\]"),
    (lambda kw: kw.update(track_chunk_idx=torch.tensor([2, 0], dtype=torch.int32)), ValueError,
     "got 2 for sequence 0 of 64 tokens"),
    (lambda kw: kw.update(track_chunk_idx=torch.tensor([1, -2], dtype=torch.int32)), ValueError,
     "got -2 for sequence 1"),
])
def test_bad_snapshot_arguments_raise_before_any_launch(mutate, exc, match):
    with pytest.raises(exc, match=match):
        _bad_track(mutate)()


def test_decode_takes_no_snapshots():
    x = make_kda_inputs(1, 1, 1, 16, 16)
    with pytest.raises(TypeError, match="track_state"):
        kimiops.fused_recurrent_kda(x.q, x.k, x.v, x.g, x.beta, track_state=torch.zeros(1, 1, 16, 16))


def test_fla_intermediate_states_error_points_to_snapshots():
    x = make_kda_inputs(1, 4, 1, 16, 16)
    with pytest.raises(NotImplementedError, match="track_state"):
        kimiops.chunk_kda(x.q, x.k, x.v, x.g, x.beta, return_intermediate_states=True)


@pytest.mark.gpu
@pytest.mark.parametrize("heads", [32, 4], ids=["parts", "segments"])
def test_gpu_snapshot_bf16(heads):
    """bf16, K = V = 128, one prompt of 4096 tokens: 32 heads walk it in pipelined parts (the
    snapshot is bit-identical to the truncated call's final state), 4 heads in segments (equal to
    rounding); boundaries inside a segment (after 640 tokens) and on one (after 1024)."""
    T = 4096
    x, cu = _varlen([T], heads, 128, 128, heads, seed=35, dtype=torch.bfloat16, device="cuda")
    args = (x.q, x.k, x.v, x.g, x.beta, x.gate_kwargs)
    for j in (10, 16):
        track = torch.full((1, heads, 128, 128), NAN, device="cuda")
        _call(args, cu, None, "triton", True, track_state=track,
              track_chunk_idx=torch.tensor([j], dtype=torch.int32, device="cuda"))
        cut, cu_cut = _prefix(x, [T], [64 * j])
        _, ht = _call((*cut, x.gate_kwargs), cu_cut, None, "triton", True)
        assert torch.isfinite(track).all()
        if heads == 32:
            assert torch.equal(bits(track), bits(ht))
        else:
            assert rel_err(track, ht) < 1e-5
