"""``BoundPrefill`` (the eager prefill shortcut's replay) on CPU tensors with the CUDA queries and
the launch entry stubbed: which arguments are the call's tensors, which are scratch, and when a
call cannot be bound. The replay itself runs in the GPU tests of ``test_chunk_kernel.py``."""

from pathlib import Path

import pytest
import torch

from kimiops.kda.kernels.chunk import BoundPrefill
from kimiops.kda.kernels.chunk_layout import ORDER_MIN_BLOCK


def _call(T=4):
    """A call's tensors ``(q, k, v, g, beta, h0, h0_indices, ht, ht_indices, cu_seqlens, A_log,
    dt_bias, track_state, track_chunk_idx)`` (pool mode: h0 is ht) and a plan holding its o and scratch."""
    q, k, g = (torch.randn(1, T, 2, 8) for _ in range(3))
    v, beta = torch.randn(1, T, 2, 8), torch.randn(1, T, 2)
    pool, idx = torch.zeros(3, 2, 8, 8), torch.zeros(1, dtype=torch.int32)
    tensors = (q, k, v, g, beta, pool, idx, pool, idx, None, None, None, None, None)
    plan = dict(q=q, o=torch.empty_like(v), parts=[(0, 1)], pdl_chain=False,
                w=torch.zeros(2, 4, 8), chain=torch.zeros(1, 2, dtype=torch.int32))
    return tensors, plan


class _Raw:
    def __init__(self, calls):
        self.head = ("fn", "meta")
        self.entry = lambda *a: calls.append(a)


def test_replay_takes_new_tensors_and_keeps_scratch_and_scalars(cuda_queries):
    calls = []
    (q, k, v, g, beta, pool, idx, *_), plan = tensors, plan = _call()
    chain_view = plan["chain"][0, 1:]  # a view of scratch made during the launch (a chain counter)
    recorded = [(_Raw(calls), (5, 2, 1), [q, plan["w"], 0.5, v, plan["o"], q, 7], (0, 1, 3, 4, 5)),
                (_Raw(calls), (1, 1, 1), [pool, idx, chain_view, k, 16], (0, 1, 2, 3))]
    bound = BoundPrefill.build(plan, recorded, tensors)
    assert bound is not None
    (q2, k2, v2, g2, beta2, pool2, idx2, *_), _ = tensors2, _ = _call()
    o = bound(q2, k2, v2, g2, beta2, pool2, idx2, pool2, idx2, None, None, None, None, None)
    assert o.shape == v2.shape and o.data_ptr() not in (plan["o"].data_ptr(), v2.data_ptr())
    assert calls == [
        (5, 2, 1, 77, "fn", "meta", q2.data_ptr(), plan["w"].data_ptr(), 0.5, v2.data_ptr(), o.data_ptr(),
         q2.data_ptr(), 7),
        (1, 1, 1, 77, "fn", "meta", pool2.data_ptr(), idx2.data_ptr(), chain_view.data_ptr(), k2.data_ptr(), 16)]
    assert any(t is plan["w"] for t in bound.scratch)  # the bound call keeps its scratch alive


def test_replay_declines_another_stream_or_device(cuda_queries):
    tensors, plan = _call()
    bound = BoundPrefill.build(plan, [(_Raw([]), (1, 1, 1), [tensors[0]], (0,))], tensors)
    cuda_queries.stream = 78
    assert bound(*tensors) is None
    cuda_queries.stream, cuda_queries.device = 77, 1
    assert bound(*tensors) is None


def test_calls_that_cannot_be_bound(cuda_queries):
    tensors, plan = _call()
    q = tensors[0]
    assert BoundPrefill.build(plan, [], tensors) is None                                   # nothing launched
    assert BoundPrefill.build(plan, [None], tensors) is None                               # Triton's own path
    stranger = torch.randn(4)                                                                # e.g. a contiguous copy
    assert BoundPrefill.build(plan, [(_Raw([]), (1, 1, 1), [stranger], (0,))], tensors) is None
    forked = dict(plan, parts=[(0, 1), (1, 2)], pdl_chain=False)                            # parts on two streams
    assert BoundPrefill.build(forked, [(_Raw([]), (1, 1, 1), [q], (0,))], tensors) is None
    chained = dict(plan, parts=[(0, 1), (1, 2)], pdl_chain=True)
    assert BoundPrefill.build(chained, [(_Raw([]), (1, 1, 1), [q], (0,))], tensors) is not None


def test_prefill_key_holds_stream_and_every_alignment(cuda_queries):
    """The chunk kernels are compiled per pointer alignment, which the tensor guard does not see:
    a prefill call's key holds every tensor's 16-byte alignment (the snapshot tensors' too), which
    snapshot tensors it passes, and the stream."""
    from kimiops.kda.runner import prefill_launch_context

    buf = torch.empty(2 * 4 * 2 * 8 + 8)
    q, shifted = buf[:64].view(1, 4, 2, 8), buf[1:65].view(1, 4, 2, 8)   # same shape and strides
    base = prefill_launch_context(q, q, q, q, q, None, None, None, None, None)
    assert prefill_launch_context(q, shifted, q, q, q, None, None, None, None, None) != base
    snaps, idx = torch.zeros(1, 2, 8, 8), torch.zeros(1, dtype=torch.int32)
    with_snaps = prefill_launch_context(q, q, q, q, q, None, None, None, None, None, snaps, idx)
    assert with_snaps != base  # the state stage is compiled with snapshots or without
    assert prefill_launch_context(q, q, q, q, q, None, None, None, None, None, buf[1:65].view(1, 2, 8, 4),
                                  idx) != with_snaps  # a snapshot buffer off 16-byte alignment
    cuda_queries.stream = 78
    assert prefill_launch_context(q, q, q, q, q, None, None, None, None, None) != base


def _varlen_recording(calls, T, N, HV=4, K=8, cap=None, order_cap=8):
    """A one-part varlen call of ``T`` tokens in ``N`` sequences as ``chunk._plan`` lays it out
    (scratch views of buffers with ``cap`` slots), its tensors and the launches it would record:
    stage 1, the longest-first order (N > 1) and the state stage, with stub launchers appending to
    ``calls``."""
    from kimiops.kda.kernels import chunk

    C = chunk.CHUNK_SIZE
    NC = T // C + N
    cap = cap or NC
    q, k, g = (torch.randn(1, T, 2, K) for _ in range(3))
    v, beta = torch.randn(1, T, HV, K), torch.randn(1, T, HV)
    pool, idx = torch.zeros(6, HV, K, K), torch.arange(N, dtype=torch.int32)
    cu = torch.arange(N + 1, dtype=torch.int32) * (T // N)
    cu[-1] = T
    tensors = (q, k, v, g, beta, pool, idx, pool, idx, cu, None, None, None, None)
    plan = dict(q=q, o=torch.empty_like(v), parts=[(0, NC)], pdl_chain=False, is_varlen=True, seg_max=1, B=1, T=T, N=N,
                HV=HV, K=K, NC=NC)
    for name in ("w", "tb", "qg", "kg", "aqk", "gc"):
        plan[name] = torch.zeros(HV, cap, 4)[:, :NC]
    if 1 < N <= chunk.ORDER_MAX_SEQS:
        plan["order"] = torch.zeros(1, max(N, order_cap), dtype=torch.int32)[:, :N]
    roles = dict(q=q, k=k, g=g, beta=beta, v=v, o=plan["o"], cu_seqlens=cu, h0=pool, ht=pool, h0_indices=idx,
                 ht_indices=idx, A_log=q, dt_bias=q, chain_done=q, carry=q, track=q, track_idx=q, order=plan.get("order", q),
                 w_out=plan["w"], tb_out=plan["tb"], qg_out=plan["qg"], kg_out=plan["kg"], aqk_out=plan["aqk"],
                 gc_out=plan["gc"], w=plan["w"], tb=plan["tb"], qg=plan["qg"], kg=plan["kg"], aqk=plan["aqk"],
                 gc=plan["gc"])
    elastic = dict(T=chunk.kernel_rows(T, True), N=N, n_programs=NC * HV, slot_hi=NC, BLOCK=chunk.order_block(N),
                   GRID_3D=True)
    recorded = []
    kernels = [(chunk.chunk_intra_kernel, (NC, HV, 1))]
    if "order" in plan:
        kernels.append((chunk.longest_first_kernel, (1, 1, 1)))
    kernels.append((chunk.chunk_state_kernel, (HV, 1, N)))
    for kernel, grid in kernels:
        values = [roles.get(n, elastic.get(n, 0)) for n in kernel.arg_names]
        positions = tuple(i for i, x in enumerate(values) if isinstance(x, torch.Tensor))
        recorded.append((_Raw(calls), grid, values, positions, kernel))
    return tensors, plan, recorded


def _replayed_values(kernel, call):
    """``{parameter name: value}`` of one stub launch ``(gx, gy, gz, stream, fn, meta, *values)``."""
    return dict(zip(kernel.arg_names, call[6:]))


def test_elastic_replay_recomputes_what_follows_the_token_and_sequence_counts(cuda_queries):
    from kimiops.kda.kernels import chunk

    calls = []
    tensors, plan, recorded = _varlen_recording(calls, T=100, N=3, cap=40)
    bound = BoundPrefill.build(plan, recorded, tensors)
    elastic = chunk.ElasticPrefill.build(plan, recorded, bound)
    assert elastic is not None and elastic.layout == ("one", True, True) and elastic.caps["slots"] == 40
    # T = 150, N = 3: the recorded kernels' variant (a varlen call passes its kernels T = 0)
    new, _, _ = _varlen_recording([], T=150, N=3)
    o = elastic(*new)
    assert o is not None and o.shape == new[2].shape
    intra, order, state = calls
    NC = 150 // chunk.CHUNK_SIZE + 3
    assert intra[:3] == (NC, 4, 1) and order[:3] == (1, 1, 1) and state[:3] == (4, 1, 3)
    vals = _replayed_values(chunk.chunk_intra_kernel, intra)
    assert (vals["T"], vals["N"], vals["n_programs"]) == (0, 3, NC * 4)
    assert vals["q"] == new[0].data_ptr() and vals["w_out"] == plan["w"].data_ptr()  # new inputs, same scratch
    assert _replayed_values(chunk.chunk_state_kernel, state)["slot_hi"] == NC
    assert _replayed_values(chunk.chunk_state_kernel, state)["o"] == o.data_ptr()
    assert _replayed_values(chunk.longest_first_kernel, order)["BLOCK"] == ORDER_MIN_BLOCK == 32
    # other sequence counts of the same kernel variants (stage 1's search has no trip count to
    # specialize; batches of 2-32 sequences share the sort's block)
    calls.clear()
    assert elastic(*_varlen_recording([], T=150, N=5)[0]) is not None
    assert _replayed_values(chunk.chunk_intra_kernel, calls[0])["N"] == 5
    assert _replayed_values(chunk.longest_first_kernel, calls[1])["BLOCK"] == 32
    # (N = 6 from a recording of N = 5; 8 slots)
    calls.clear()
    tensors, plan, recorded = _varlen_recording(calls, T=100, N=5, cap=40)
    elastic = chunk.ElasticPrefill.build(plan, recorded, BoundPrefill.build(plan, recorded, tensors))
    assert elastic(*_varlen_recording([], T=70, N=6)[0]) is not None
    intra, order, state = calls
    assert intra[:3] == (8, 4, 1) and state[:3] == (4, 1, 6)
    assert _replayed_values(chunk.chunk_intra_kernel, intra)["N"] == 6


def test_elastic_replay_declines_what_it_has_not_seen(cuda_queries):
    from kimiops.kda.kernels import chunk

    calls = []
    tensors, plan, recorded = _varlen_recording(calls, T=100, N=3, cap=40)
    elastic = chunk.ElasticPrefill.build(plan, recorded, BoundPrefill.build(plan, recorded, tensors))
    declined = {
        "more slots than the scratch holds": _varlen_recording([], T=1500, N=3)[0],  # the recorded variant
        "one sequence: no longest-first order": _varlen_recording([], T=100, N=1)[0],
    }
    for why, new in declined.items():
        assert elastic(*new) is None, why
    assert calls == []  # nothing launched by a declined call
    # the same kernel variants but for the sort's block: 33 sequences sort in a block of 64
    t33, p33, r33 = _varlen_recording(calls, T=100, N=33, cap=80, order_cap=64)
    e33 = chunk.ElasticPrefill.build(p33, r33, BoundPrefill.build(p33, r33, t33))
    assert e33(*_varlen_recording([], T=100, N=5)[0]) is None
    assert e33(*_varlen_recording([], T=130, N=34)[0]) is not None
    calls.clear()
    # the same kernel variant, only the layout or the order buffer differ
    t5, p5, r5 = _varlen_recording(calls, T=100, N=5, cap=40, order_cap=5)
    five = chunk.ElasticPrefill.build(p5, r5, BoundPrefill.build(p5, r5, t5))
    assert five(*_varlen_recording([], T=70, N=6)[0]) is None  # more sequences than its order buffer holds
    t2, p2, r2 = _varlen_recording(calls, T=100, N=2, cap=200)
    two = chunk.ElasticPrefill.build(p2, r2, BoundPrefill.build(p2, r2, t2))
    assert two(*_varlen_recording([], T=3000, N=2)[0]) is None  # 94 chunks at 8 pairs: segments
    assert calls == []
    cuda_queries.stream = 78
    assert elastic(*_varlen_recording([], T=150, N=3)[0]) is None
    cuda_queries.stream = 77
    # a varlen call's token and sequence counts select no variant (T = 160, a multiple of 16, as
    # T = 100; 48 sequences, a multiple of 16, as 49); the sort's block does (70 sequences: 128),
    # which a recording of it teaches
    assert elastic(*_varlen_recording([], T=160, N=3)[0]) is not None
    calls.clear()
    more = []
    t49, p49, r49 = _varlen_recording(more, T=100, N=49, cap=200, order_cap=128)
    e49 = chunk.ElasticPrefill.build(p49, r49, BoundPrefill.build(p49, r49, t49))
    assert e49(*_varlen_recording([], T=110, N=49)[0]) is not None
    assert e49(*_varlen_recording([], T=100, N=48)[0]) is not None
    more.clear()
    assert e49(*_varlen_recording([], T=100, N=70)[0]) is None and more == []
    t70, p70, r70 = _varlen_recording(more, T=100, N=70, cap=200, order_cap=128)
    e49.learn(chunk.ElasticPrefill.build(p70, r70, BoundPrefill.build(p70, r70, t70)))
    assert e49(*_varlen_recording([], T=100, N=70)[0]) is not None
    # a recording of another sequence count (with a larger order buffer) takes the place of the old
    # one (``runner.remember_eager``) and learns its variants
    t9, p9, r9 = _varlen_recording(more, T=100, N=9, cap=40, order_cap=16)
    nine = chunk.ElasticPrefill.build(p9, r9, BoundPrefill.build(p9, r9, t9))
    nine.learn(elastic)
    for T, N in ((100, 9), (160, 3), (150, 3)):
        assert nine(*_varlen_recording([], T=T, N=N)[0]) is not None, (T, N)


def test_elastic_replay_takes_varlen_calls_cut_by_the_default_rules(cuda_queries):
    from kimiops.kda.kernels import chunk

    tensors, plan, recorded = _varlen_recording([], T=100, N=3)
    bound = BoundPrefill.build(plan, recorded, tensors)
    assert chunk.ElasticPrefill.build(dict(plan, is_varlen=False, B=2), recorded, bound) is None  # a fixed-length batch
    assert chunk.ElasticPrefill.build(dict(plan, parts=[(0, 2), (2, 6)]), recorded, bound) is None
    assert chunk.ElasticPrefill.build(dict(plan, seg_max=2), recorded, bound) is None
    assert chunk.ElasticPrefill.build(dict(plan, track=tensors[0]), recorded, bound) is not None  # snapshots: replayed
    # the launch rules take segments for few (sequence, head) pairs and pipelined parts for one
    # long sequence; a batch at 32 heads runs in one part
    assert chunk.elastic_layout(4096, 2, 4, 128)[0] == ("segments",)
    assert chunk.elastic_layout(4096, 1, 32, 128)[0] == ("parts", False, True)
    assert chunk.elastic_layout(4096, 2, 32, 128)[0] == ("one", True, True)
    assert chunk.elastic_layout(200, 1, 32, 128)[0] == ("one", False, True)


def _pool_call(lens, H, HV, K, pool, gate=True, track=False, fixed=False):
    """Arguments of ``chunk.chunk_kda_fwd`` for a varlen pool call of sequences ``lens`` (CPU, never
    computed: the launches are stubbed); ``track``: with state snapshots; ``fixed``: one sequence
    of fixed length instead (no cu_seqlens)."""
    T = sum(lens)
    q, k = (torch.empty(1, T, H, K, dtype=torch.bfloat16) for _ in range(2))
    v, g = (torch.empty(1, T, HV, K, dtype=torch.bfloat16) for _ in range(2))
    beta = torch.empty(1, T, HV, dtype=torch.bfloat16)
    cu = torch.tensor([0, *torch.tensor(lens).cumsum(0).tolist()], dtype=torch.int32)
    idx = torch.arange(len(lens), dtype=torch.int32)
    kw = dict(scale=K ** -0.5, cu_seqlens=None if fixed else cu, h0=pool, h0_indices=idx, ht=pool, ht_indices=idx, state_v_first=True,
              use_qk_l2norm=True, use_beta_sigmoid=True, gate="softplus" if gate else "none",
              A_log=torch.zeros(HV) if gate else None, dt_bias=None, lower_bound=None)
    if track:
        kw.update(track_state=torch.empty(len(lens), HV, K, K),
                  track_chunk_idx=torch.zeros(len(lens), dtype=torch.int32))
    return (q, k, v, g, beta), kw


@pytest.mark.parametrize("form, track", [("one", False), ("one_flat", False), ("parts", False), ("segments", False),
                                         ("one", True), ("parts", True), ("segments", True), ("one_fixed", False),
                                         ("parts_fixed", True), ("segments_fixed", False)])
def test_elastic_replay_launches_what_the_full_path_launches(cuda_queries, prefill_launches, form, track):
    """For every token and sequence count in each form of layout, a replay either declines or makes
    the full path's launches exactly: the same kernels in the same order, the same compiled variant
    (specialization key), grids and arguments (o aside, which each allocates). A declined call's
    recording teaches the entry (``learn``), after which it replays. Calls repeating the previous
    call's counts (as a model's layers do) reuse its launches with their own tensors; a call of the
    previous token count but another sequence count does not. Parts: one prompt at 32 heads
    (2-8 parts); segments: one or two prompts at 4 heads; one part: batches at 4 heads, and batches
    of more sequences than the state stage's 3-D grid holds (its flat grid, one head); ``_fixed``:
    one sequence of fixed length (no cu_seqlens) in each form. With
    ``track``, calls also write state snapshots (SGLang's prefix cache), whose two tensors the
    replay takes as the call's."""
    from kimiops.kda.kernels import chunk

    calls = prefill_launches
    chunk_fwd = chunk.chunk_kda_fwd
    fixed = form.endswith("_fixed")
    H, HV, K = {"one": (4, 4, 16), "one_flat": (1, 1, 16), "parts": (1, 32, 16), "segments": (4, 4, 16)}[
        form.split("_")[0] if fixed else form]
    first, later = {
        "one": ([700, 300, 24], [[100, 37], [37, 50, 50], [37, 50, 50], [64, 0, 90], [160, 96], [5, 200, 31],
                                 [80, 80], [33, 17, 1]]),
        "one_flat": ([1] * 70000, [[1] * 70010, [2] + [1] * 69999, [1] * 70000 + [5], [3] * 65600]),
        "parts": ([36000], [[1024], [1100], [2048], [3000], [3000], [4096], [8192], [12345], [20000], [33000],
                            [36000]]),
        "segments": ([16384], [[2048], [3000], [4096], [5000, 100], [5000, 100], [8192], [9001], [2500, 2500],
                               [16384]]),
        "one_fixed": ([500], [[100], [37], [37], [64], [160], [1], [31], [480], [110], [70], [90], [130]]),
        "parts_fixed": ([36000], [[1024], [1100], [2048], [3000], [3000], [4096], [8192], [12345], [33000]]),
        "segments_fixed": ([16384], [[2048], [3000], [4096], [5000], [5000], [8192], [9001], [16384]]),
    }[form]
    pool = torch.zeros(4, HV, K, K)
    _fresh_workspace()
    x, kw = _pool_call(first, H, HV, K, pool, track=track, fixed=fixed)
    bind = []
    chunk_fwd(*x, bind=bind, **kw)
    entry = bind[1]
    assert entry is not None and entry.layout[0] == form.split("_")[0]
    assert entry.layout[-1] is (form != "one_flat") or form.startswith("segments")  # the state stage's 3-D grid
    replayed, learned, parts_seen = 0, 0, set()
    for lens in later:
        x, kw = _pool_call(lens, H, HV, K, pool, track=track, fixed=fixed)
        assert chunk.elastic_layout(sum(lens), len(lens), HV, K, not fixed)[0][0] == form.split("_")[0], lens
        calls.clear()
        o_full = chunk_fwd(*x, **kw)
        full = [c for c in calls]
        args = (*x, pool, kw["h0_indices"], pool, kw["ht_indices"], kw["cu_seqlens"], kw["A_log"], None,
                kw.get("track_state"), kw.get("track_chunk_idx"))
        calls.clear()
        o = entry(*args)
        if o is None:  # a kernel variant or more scratch than recorded: the full path records and teaches
            assert calls == [], lens
            bind = []
            chunk_fwd(*x, bind=bind, **kw)
            bind[1].learn(entry)
            entry, learned = bind[1], learned + 1
            calls.clear()
            o = entry(*args)
            assert o is not None, lens
        else:
            replayed += 1
        mark = lambda c, out: tuple("o" if a == out.data_ptr() else a for a in c)  # noqa: E731
        assert [mark(c, o) for c in calls] == [mark(c, o_full) for c in full], lens
        parts_seen.add(sum(c[4] == "chunk_intra_kernel" for c in calls))
    # varlen batches in one part and one prompt in parts: their token and sequence counts select no
    # kernel variant (varlen kernels take T as 0, the counts are not specialized, stage 1's search has
    # no trip count, 2-32 sequences share the sort's block), so every call replays; the other forms
    # record again where a fixed length's T selects another variant or a call needs more scratch
    assert replayed >= len(later) // 2 and (learned == 0) == (form in ("one", "parts")), (replayed, learned)
    if form == "parts":
        assert {2, 4, 8} <= parts_seen, parts_seen


def test_varlen_calls_with_new_token_counts_select_no_new_kernel_variant(cuda_queries, prefill_launches):
    """Serving engines run extend with a new token count nearly every call. Triton compiles a kernel
    per specialization of its integer arguments (the value 1, divisibility by 16), so counts passed
    that way would compile new variants of identical machine code (``chunk_layout.CALL_COUNTS``).
    Full-path varlen calls of three sequences at 32 heads, 3 to 2400 tokens in one part (one
    specialization key per kernel), and one prompt of 1,100 to 36,000 tokens in 2 to 8 pipelined
    parts (the first part's stage 1 and later ones' are compiled apart, PDL, and so are later parts
    whose completion counter is 16-byte aligned or not): no call launches a variant the longest
    call lacks. A fixed-length call's T still selects its variant."""
    from kimiops.kda.kernels import chunk

    calls = prefill_launches
    pool = torch.zeros(4, 32, 16, 16)
    for many in ([[33, 33, 33], [1, 1, 1], [64, 64, 32], [100, 7, 900], [512, 512, 1], [800, 800, 800]],
                 [[1100], [2048], [3001], [8192], [12345], [36000]]):
        keys, forms = [], set()
        _fresh_workspace()
        for lens in many:
            forms.add(chunk.elastic_layout(sum(lens), len(lens), 32, 16)[0])
            calls.clear()
            chunk.chunk_kda_fwd(*_pool_call(lens, 1, 32, 16, pool)[0], **_pool_call(lens, 1, 32, 16, pool)[1])
            keys.append({(c[4], c[5]) for c in calls})
        assert len(forms) == 1 and set().union(*keys) == max(keys, key=len), [len(k) for k in keys]
        if forms == {("one", True, True)}:
            assert len(keys[0]) == 3  # stage 1, the longest-first order, the state stage
    fixed = set()
    for T in (100, 112):  # one sequence of fixed length: T divisible by 16 or not
        calls.clear()
        chunk.chunk_kda_fwd(*_pool_call([T], 1, 32, 16, pool, fixed=True)[0],
                            **_pool_call([T], 1, 32, 16, pool, fixed=True)[1])
        fixed.add(next(c[5] for c in calls if c[4] == "chunk_intra_kernel"))
    assert len(fixed) == 2


@pytest.mark.parametrize("pdl", [True, False])
def test_calls_in_one_part_launch_the_stage_1_of_a_chains_first_part(monkeypatch, cuda_queries, prefill_launches,
                                                                    pdl):
    """Where programmatic dependent launch exists, a call in one part (a batch, or segments) and the
    first part of a pipelined prompt launch one compiled stage 1 (``PDL`` 1: its early trigger does
    nothing where no programmatic dependent follows), so a server that sees both compiles it once;
    where it does not, every stage 1 launches with ``PDL`` 0. Per gate mode."""
    from kimiops.kda.kernels import chunk

    calls = prefill_launches
    monkeypatch.setattr(chunk, "supports_pdl", lambda device: pdl)
    at_pdl = 6 + chunk.chunk_intra_kernel.arg_names.index("PDL")  # a stub launch: grid, stream, name, key, values
    for gate in (True, False):
        first = {}
        for lens, HV, form in (([100, 7, 900], 32, "one"), ([16384], 4, "segments"), ([36000], 32, "parts")):
            assert chunk.elastic_layout(sum(lens), len(lens), HV, 16)[0][0] == form
            x, kw = _pool_call(lens, HV, HV, 16, torch.zeros(2, HV, 16, 16), gate=gate)
            calls.clear()
            chunk.chunk_kda_fwd(*x, **kw)
            stage_1 = [c[at_pdl] for c in calls if c[4] == "chunk_intra_kernel"]
            parts = len(stage_1) if form == "parts" else 1
            assert parts > (form == "parts") and stage_1 == ([1] + [2] * (parts - 1) if pdl else [0] * parts), form
            first[form] = next(c[5] for c in calls if c[4] == "chunk_intra_kernel")
        assert first["one"] == first["parts"], gate


def test_elastic_replay_declines_calls_beyond_its_scratch(cuda_queries, prefill_launches):
    """Parts and segments need scratch that the slot count alone does not bound: one completion
    counter per part, maps and start states per segment. A recording whose stage-1 scratch holds
    a longer call (an earlier call of another layout grew it) but whose chain or segment buffers
    are smaller declines that call, launching nothing."""
    from kimiops.kda.kernels import chunk

    calls = prefill_launches
    for HV, H, grow, small, large in ((32, 1, [4100, 4100], [1024], [4096]),   # 2 parts, then 4
                                      (4, 4, [900] * 12, [2048], [4096])):   # 4 segments, then 8
        _fresh_workspace()
        pool = torch.zeros(4, HV, 16, 16)
        chunk.chunk_kda_fwd(*_pool_call(grow, H, HV, 16, pool)[0], **_pool_call(grow, H, HV, 16, pool)[1])
        assert chunk.elastic_layout(sum(grow), len(grow), HV, 16)[0][0] == "one"
        x, kw = _pool_call(small, H, HV, 16, pool)
        bind = []
        chunk.chunk_kda_fwd(*x, bind=bind, **kw)
        entry = bind[1]
        x, kw = _pool_call(large, H, HV, 16, pool)
        assert _slots_fit(entry, sum(large), len(large))
        calls.clear()
        args = (*x, pool, kw["h0_indices"], pool, kw["ht_indices"], kw["cu_seqlens"], kw["A_log"], None)
        assert entry(*args) is None and calls == [], (HV, large)
        # the same entry with room for them replays (nothing else declined the call)
        entry.caps.update({"parts": 8, "seg_maps": 8, "seg_starts": 8})
        assert entry(*args) is not None and calls, (HV, large)


def _slots_fit(entry, T, N):
    """Whether a call's chunk slots fit the entry's stage-1 scratch."""
    from kimiops.kda.kernels.chunk_layout import varlen_slots

    return varlen_slots(T, N) <= entry.caps["slots"]


def _fresh_workspace():
    """Scratch of earlier tests would be larger than this test's first call and hold everything."""
    from kimiops.kda.workspace import empty_cache

    empty_cache()


def test_elastic_guard_leaves_only_the_token_and_sequence_counts_free():
    """``runner``'s elastic entries: the guard frees T (dimension 1 of the token-major inputs, not
    their row stride) and N (dimension 0 of cu_seqlens, the indices, a dense state) and nothing
    else, and a call must agree with itself on T and N."""
    from kimiops.kda import runner

    def call(T, N, H=2, dense=False, v_heads=4):
        q, k, g = (torch.randn(1, T, H, 8) for _ in range(3))
        v, beta = torch.randn(1, T, v_heads, 8), torch.randn(1, T, v_heads)
        state = torch.zeros(N if dense else 6, v_heads, 8, 8)
        idx = None if dense else torch.zeros(N, dtype=torch.int32)
        cu = torch.zeros(N + 1, dtype=torch.int32)
        return q, k, v, g, beta, state, idx, cu

    rec = call(100, 3)
    guard = runner.tensor_guard(runner.eager_tensors(*rec, None, None), runner._ELASTIC_VARLEN)
    assert guard.check(*runner.eager_tensors(*call(37, 5), None, None))
    assert not guard.check(*runner.eager_tensors(*call(37, 5, H=4), None, None))        # heads are fixed
    assert not guard.check(*runner.eager_tensors(*call(37, 5, v_heads=2), None, None))
    # the batch dimension of varlen inputs stays 1, and token rows keep their stride: a q cut from a
    # fused projection would be read by the replay as if it were dense
    two = [x.expand(2, *x.shape[1:]) if i < 5 else x for i, x in enumerate(call(37, 5))]
    assert not guard.check(*runner.eager_tensors(*two, None, None))
    q, *rest = call(37, 5)
    fused = torch.randn(1, 37, 3, 2, 8)[:, :, 0]  # q's rows 48 elements apart instead of 16
    assert fused.shape == q.shape and not guard.check(*runner.eager_tensors(fused, *rest, None, None))
    q, k, v, g, beta, state, idx, cu = call(50, 2)
    assert runner._elastic_consistent(q, k, v, g, beta, state, idx, cu)
    for i in range(1, 5):  # k, v, g, beta with another token count than q
        args = [q, k, v, g, beta]
        args[i] = args[i][:, :49]
        assert not runner._elastic_consistent(*args, state, idx, cu)
    assert not runner._elastic_consistent(q, k, v, g, beta, state, idx[:1], cu)
    q, k, v, g, beta, state, _, cu = call(50, 2, dense=True)
    assert runner._elastic_consistent(q, k, v, g, beta, state, None, cu)
    assert not runner._elastic_consistent(q, k, v, g, beta, state[:1], None, cu)


def test_elastic_entries_replace_their_layout_and_keep_other_layouts():
    """``runner.remember_eager`` for a varlen call that elastic entries declined: the new recording
    learns the kernel variants of the declined entry of its own layout and replaces it; entries of
    another layout (one request, a batch) stay beside it."""
    from kimiops.kda import runner

    VARLEN = runner._ELASTIC_VARLEN  # the free dimensions of a varlen call's elastic guard

    class Launch:
        repeats_recorded_shapes = True  # as ElasticPrefill

        def __init__(self, layout):
            self.layout, self.learned = layout, []

        def learn(self, other):
            self.learned.append(other)

    q, k, v, g, beta = (torch.randn(1, 50, 2, 8) for _ in range(5))
    cu, idx, pool = torch.zeros(3, dtype=torch.int32), torch.zeros(2, dtype=torch.int32), torch.zeros(4, 2, 8, 8)
    tensors = runner.eager_tensors(q, k, v, g, beta, pool, idx, cu, None, None)
    scalars = ("test-signature",)
    runner.forget_eager()
    try:
        runner.remember_eager(((scalars, 3), tensors, False, True, VARLEN), None, True, None, True, Launch((True, True)))
        runner.remember_eager(((scalars, 3), tensors, False, True, VARLEN), None, True, None, True, Launch((False, True)))
        batch, single = runner._elastic[scalars][1], runner._elastic[scalars][0]
        assert (batch.launch.layout, single.launch.layout) == ((True, True), (False, True))
        newer = Launch((True, True))
        runner.remember_eager(((scalars, 3), tensors, False, (single, batch), VARLEN), None, True, None, True, newer)
        assert newer.learned == [batch.launch]  # only the entry of its own layout
        assert [e.launch for e in runner._elastic[scalars]] == [newer, single.launch]
        assert runner._eager == {}  # not seen twice with these exact shapes: no exact entry
        assert runner._elastic[scalars][0].guard.check(*runner.eager_tensors(
            *(torch.randn(1, 90, 2, 8) for _ in range(5)), pool, torch.zeros(3, dtype=torch.int32),
            torch.zeros(4, dtype=torch.int32), None, None))
    finally:
        runner.forget_eager()


def test_elastic_entry_of_a_dense_state_sizes_the_final_state_by_the_call():
    """A varlen call with a dense state: the elastic entry allocates the final state for the
    call's own sequence count; a call recorded only for its exact shapes leaves no elastic entry."""
    from kimiops.kda import runner

    VARLEN = runner._ELASTIC_VARLEN  # the free dimensions of a varlen call's elastic guard

    class Launch:
        layout = (True, True)
        repeats_recorded_shapes = True  # as ElasticPrefill

        def __call__(self, *args):
            self.ht = args[7]
            return torch.empty(0)

    def tensors(T, N):
        return runner.eager_tensors(*(torch.randn(1, T, 2, 8) for _ in range(5)), torch.zeros(N, 2, 8, 8), None,
                                    torch.zeros(N + 1, dtype=torch.int32), None, None)

    scalars = ("test-dense",)
    runner.forget_eager()
    try:
        launch = Launch()
        runner.remember_eager(((scalars, 3), tensors(50, 2), True, False, VARLEN), None, False, torch.empty(2, 2, 8, 8), True,
                              launch)
        assert scalars not in runner._elastic and len(runner._eager[(scalars, 3)]) == 1
        runner.remember_eager(((scalars, 3), tensors(50, 2), False, True, VARLEN), None, False, torch.empty(2, 2, 8, 8), True,
                              launch)
        assert len(runner._eager[(scalars, 3)]) == 1  # its exact shapes: the elastic entry covers them
        runner.remember_eager(((scalars, 3), tensors(60, 2), True, True, VARLEN), None, False, torch.empty(2, 2, 8, 8), True,
                              Launch())
        assert len(runner._eager[(scalars, 3)]) == 1 and len(runner._elastic[scalars]) == 2
        entry = runner._elastic[scalars][0]
        new = tensors(90, 5)
        assert entry.guard.check(*new)
        o, ht = entry(*new[:5], new[5], None, new[7], None, None)
        assert ht is entry.launch.ht and ht.shape == (5, 2, 8, 8)
    finally:
        runner.forget_eager()


@pytest.mark.parametrize("pool", [True, False])
def test_elastic_entry_with_snapshots_passes_the_calls_snapshot_tensors(pool):
    """A varlen call that writes state snapshots (``track_state [N, HV, V, K]``, ``track_chunk_idx
    [N]``): the elastic guard leaves their sequence dimension free, the call must agree with itself
    on N there too, and the entry hands the launch the call's own two tensors after dt_bias (over
    a pool, and with dense initial and final states)."""
    from kimiops.kda import runner

    VARLEN = runner._ELASTIC_VARLEN  # the free dimensions of a varlen call's elastic guard

    class Launch:
        layout = ("one", True, True)
        repeats_recorded_shapes = True  # as ElasticPrefill

        def __call__(self, *args):
            self.args = args
            return torch.empty(0)

    def call(T, N):
        q, k, v, g, beta = (torch.randn(1, T, 2, 8) for _ in range(5))
        state = torch.zeros(6 if pool else N, 2, 8, 8)
        idx = torch.zeros(N, dtype=torch.int32) if pool else None
        cu = torch.zeros(N + 1, dtype=torch.int32)
        track = (torch.zeros(N, 2, 8, 8), torch.full((N,), -1, dtype=torch.int32))
        return (q, k, v, g, beta, state, idx, cu), track

    scalars = ("test-track",)
    runner.forget_eager()
    try:
        (q, k, v, g, beta, state, idx, cu), track = call(50, 2)
        tensors = runner.eager_tensors(q, k, v, g, beta, state, idx, cu, None, None, None, track)
        assert len(tensors) == 13
        runner.remember_eager(((scalars, 3), tensors, False, True, VARLEN), None, pool, None if pool else state, True,
                              Launch())
        entry = runner._elastic[scalars][0]
        (q, k, v, g, beta, state, idx, cu), track = call(90, 5)
        assert entry.guard.check(*runner.eager_tensors(q, k, v, g, beta, state, idx, cu, None, None, None, track))
        assert runner._elastic_consistent(q, k, v, g, beta, state, idx, cu, None, *track)
        assert not runner._elastic_consistent(q, k, v, g, beta, state, idx, cu, None, track[0][:4], track[1])
        assert not runner._elastic_consistent(q, k, v, g, beta, state, idx, cu, None, track[0], track[1][:4])
        wide = (torch.zeros(5, 2, 8, 16)[..., :8], track[1])  # snapshot rows not dense: a fixed stride differs
        assert not entry.guard.check(*runner.eager_tensors(q, k, v, g, beta, state, idx, cu, None, None, None, wide))
        entry(q, k, v, g, beta, state, idx, cu, None, None, None, track)
        assert entry.launch.args[-2] is track[0] and entry.launch.args[-1] is track[1]
        assert entry.launch.args[5] is state
        if pool:
            assert entry.launch.args[7] is state  # ht: the pool
        else:
            assert entry.launch.args[7].shape == (5, 2, 8, 8)  # the final states of the call's 5 sequences
    finally:
        runner.forget_eager()


def test_elastic_guard_of_one_fixed_length_prompt_leaves_only_its_token_count_free():
    """Prefill of one sequence without cu_seqlens (``runner._ELASTIC_FIXED``): the guard frees the
    token count (and the batch stride, which follows it and is never read with one sequence), not
    the batch size; the call must agree with itself on T."""
    from kimiops.kda import runner

    def call(T, B=1):
        q, k, g = (torch.randn(B, T, 2, 8) for _ in range(3))
        v, beta = torch.randn(B, T, 4, 8), torch.randn(B, T, 4)
        return q, k, v, g, beta, torch.zeros(B, 4, 8, 8), None, None

    guard = runner.tensor_guard(runner.eager_tensors(*call(100), None, None, None, (None, None)),
                                runner._ELASTIC_FIXED)
    assert guard.check(*runner.eager_tensors(*call(37), None, None, None, (None, None)))
    assert not guard.check(*runner.eager_tensors(*call(37, B=2), None, None, None, (None, None)))
    q, k, v, g, beta, state, _, _ = call(50)
    assert runner._elastic_consistent(q, k, v, g, beta, state, None, None, chunked=True)
    assert not runner._elastic_consistent(q, k, v[:, :49], g, beta, state, None, None, chunked=True)


def test_eager_prefill_calls_through_the_public_api_make_the_full_paths_launches(monkeypatch):
    """A short run of ``benchmarks/tools/fuzz_eager_prefill_cpu.py``: random signatures and runs of
    public ``chunk_kda`` calls (varlen and fixed length, pools, dense states, snapshots, gates,
    repeated counts, strided and unaligned inputs) through the whole eager shortcut, each against
    the same call in debug mode (no shortcut): the same launches, and the shortcut taken."""
    tools = Path(__file__).resolve().parents[2] / "benchmarks" / "tools"
    monkeypatch.syspath_prepend(str(tools))
    import fuzz_eager_prefill_cpu

    report = []
    counts = fuzz_eager_prefill_cpu.fuzz(60, 12, seed=5, out=report.append,
                                         setattr_=lambda obj, name, value: monkeypatch.setattr(obj, name, value,
                                                                                               raising=False))
    assert counts["mismatches"] == 0, report[:3]
    assert counts["elastic"] > 100 and counts["exact"] > 0, counts
