"""The eager decode shortcut at a changing batch size (``recurrent.ElasticDecode`` and the runner's
``_elastic`` entries for decode) on CPU tensors with the CUDA queries and the launch entry stubbed:
what a new N changes in the bound launch, which config it needs, what the guard leaves free and
what the runner keeps. The launches themselves run in the GPU tests of ``test_ops.py``."""

import types

import torch

from kimiops.kda import runner
from kimiops.kda.kernels import recurrent as rec


def _raw(calls):
    return types.SimpleNamespace(entry=lambda *a: calls.append(a), head=("fn", "meta"))  # a RawLaunch's call layout


def _tail(N, T):
    """A bound launch's arguments from ``scale`` on: scale, lower_bound, N, T, then the rest."""
    tail = [0.5, 0.0, 0, 0, 0, "strides and constexprs"]
    tail[rec._TAIL_N], tail[rec._TAIL_T] = N, T
    return tuple(tail)


def test_tail_positions_name_the_kernels_N_and_T():
    names = rec._recurrent_kda_fwd_kernel.arg_names
    first = names.index("scale")
    assert names[first + rec._TAIL_N] == "N" and names[first + rec._TAIL_T] == "T"


def test_elastic_decode_binds_a_new_batch_size_of_the_same_config(cuda_queries):
    """A recording at N = 1 (8 value heads, cu_seqlens form) repeats at N = 4: N * HV = 32 gets the
    same config from the table, so the same kernel runs with N, T and the grid changed; N = 8
    (N * HV = 64) needs another config, which only a recording with it (``learn``) supplies."""
    HV, calls = 8, []
    cfg = rec.config_for(1 * HV, varlen=True)
    assert rec.config_for(4 * HV, varlen=True) == cfg and rec.config_for(8 * HV, varlen=True) != cfg
    nv = 128 // cfg.block_v
    bound = rec.BoundLaunch(_raw(calls), nv * 1 * HV, _tail(1, 1), 0, True, True, True)
    elastic = rec.ElasticDecode(bound, cfg, HV, varlen=True)
    at4 = elastic.bound_for(4, 6)
    assert at4.grid == nv * 4 * HV and at4.tail == _tail(4, 6)
    assert at4.raw is bound.raw and (at4.device, at4.gate, at4.has_h0, at4.has_ht) == (0, True, True, True)
    assert bound.grid == nv * HV and bound.tail == _tail(1, 1)  # the recording is left as it was
    assert elastic.bound_for(8, 8) is None
    cfg8 = rec.config_for(8 * HV, varlen=True)
    other = rec.ElasticDecode(rec.BoundLaunch(_raw(calls), 128 // cfg8.block_v * 8 * HV, _tail(8, 8), 0, True, True,
                                              True), cfg8, HV, varlen=True)
    other.learn(elastic)
    assert other.bound_for(3, 3).grid == nv * 3 * HV and other.bound_for(7, 9).tail == _tail(7, 9)
    assert other.variants[cfg] is bound  # learned, not copied


def test_elastic_decode_in_batch_mode_follows_the_batch_table(cuda_queries):
    """Batch mode picks configs from its own table: at 32 value heads N = 3 and 4 share one there
    (N * HV 96 and 128) that the cu_seqlens table does not give them."""
    HV = 32
    cfg = rec.config_for(3 * HV, varlen=False)
    assert rec.config_for(4 * HV, varlen=False) == cfg and rec.config_for(4 * HV, varlen=True) != cfg
    nv = 128 // cfg.block_v
    bound = rec.BoundLaunch(_raw([]), nv * 3 * HV, _tail(3, 1), 0, False, True, True)
    elastic = rec.ElasticDecode(bound, cfg, HV, varlen=False)
    assert elastic.bound_for(4, 1).grid == nv * 4 * HV
    assert rec.config_for(2 * HV, varlen=False) != cfg and elastic.bound_for(2, 1) is None
    assert elastic.bound_for(3, 1).tail == bound.tail


def _batch(N, H=2, HV=4, D=8, T=1, pool=True):
    """Decode inputs in batch mode ``[N, T, heads, D]`` as ``eager_tensors`` orders them."""
    q, k = (torch.randn(N, T, H, D) for _ in range(2))
    g = torch.randn(N, T, HV, D)
    v, beta = torch.randn(N, T, HV, D), torch.randn(N, T, HV)
    state = torch.zeros(6 if pool else N, HV, D, D)
    idx = torch.zeros(N, dtype=torch.int32) if pool else None
    return q, k, v, g, beta, state, idx, None


def test_batch_mode_guard_leaves_only_the_batch_size_free():
    """Without cu_seqlens the elastic guard frees dimension 0 of every per-sequence tensor and
    nothing else: tokens per request, heads and every stride (the kernel reads the batch stride)
    stay as recorded; a call must agree with itself on N."""
    guard = runner.tensor_guard(runner.eager_tensors(*_batch(3), None, None), runner._ELASTIC_BATCH)
    assert guard.check(*runner.eager_tensors(*_batch(7), None, None))
    assert guard.check(*runner.eager_tensors(*_batch(1), None, None))
    assert not guard.check(*runner.eager_tensors(*_batch(7, T=2), None, None))
    assert not guard.check(*runner.eager_tensors(*_batch(7, HV=8), None, None))
    q, k, v, g, beta, state, idx, cu = _batch(7)
    fused = torch.randn(7, 3, 2, 8)[:, :1]  # rows of a fused projection: only the batch stride differs
    assert fused.shape == q.shape and fused.stride()[1:] == q.stride()[1:]
    assert not guard.check(*runner.eager_tensors(fused, k, v, g, beta, state, idx, cu, None, None))
    assert runner._elastic_consistent(q, k, v, g, beta, state, idx, cu)
    for i in range(1, 5):  # k, v, g, beta with another batch size than q
        args = [q, k, v, g, beta]
        args[i] = args[i][:6]
        assert not runner._elastic_consistent(*args, state, idx, cu)
    assert not runner._elastic_consistent(q, k, v, g, beta, state, idx[:6], cu)
    acc = torch.ones(7, dtype=torch.int32)
    assert runner._elastic_consistent(q, k, v, g, beta, state, idx, cu, acc)
    assert not runner._elastic_consistent(q, k, v, g, beta, state, idx, cu, acc[:6])
    q, k, v, g, beta, state, _, cu = _batch(5, pool=False)
    assert runner._elastic_consistent(q, k, v, g, beta, state, None, cu)
    assert not runner._elastic_consistent(q, k, v, g, beta, state[:4], None, cu)


def test_a_new_batch_size_is_launched_and_kept_as_an_exact_entry(cuda_queries):
    """``runner._elastic_decode``: the bound launch of the call's N is launched with the call's
    tensors and kept under ``(scalars, N)``, so the next call at that N is an exact hit; a config
    not recorded launches nothing and keeps nothing (the full path then runs)."""
    HV, calls = 4, []
    cfg = rec.config_for(3 * HV, varlen=False)
    nv = 128 // cfg.block_v
    bound = rec.BoundLaunch(_raw(calls), nv * 3 * HV, _tail(3, 1), 0, False, True, True)
    recorded = runner.eager_tensors(*_batch(3), None, None)
    entry = runner._EagerCall(runner.tensor_guard(recorded, runner._ELASTIC_BATCH),
                              rec.ElasticDecode(bound, cfg, HV, varlen=False), True, None, True)
    scalars = ("test-decode",)
    runner.forget_eager()
    try:
        q, k, v, g, beta, pool, idx, _ = call = _batch(5)
        tensors = runner.eager_tensors(*call, None, None)
        o, final = runner._elastic_decode(entry, (scalars, q.shape, None), tensors, q, k, v, g, beta, pool, idx, None, None,
                                          None, None)
        assert final is pool and o.shape == v.shape
        grid, *_ = calls[-1]
        assert grid == nv * 5 * HV and calls[-1][-len(bound.tail):] == _tail(5, 1)
        assert calls[-1][6] == q.data_ptr() and calls[-1][11] == o.data_ptr()
        kept = runner._eager[(scalars, q.shape, None)]
        assert len(kept) == 1 and kept[0].guard.check(*tensors) and kept[0].launch.grid == nv * 5 * HV
        assert not kept[0].guard.check(*runner.eager_tensors(*_batch(6), None, None))
        none, launched = _batch(0), len(calls)  # no request: the full path launches nothing
        assert runner._elastic_decode(entry, (scalars, none[0].shape, None), runner.eager_tensors(*none, None, None),
                                      *none[:7], None, None, None, None) is None
        assert len(calls) == launched and (scalars, none[0].shape, None) not in runner._eager
        far = _batch(64)  # N * HV = 256: another config of the batch table
        assert rec.config_for(64 * HV, varlen=False) != cfg
        n = len(calls)
        assert runner._elastic_decode(entry, (scalars, far[0].shape, None), runner.eager_tensors(*far, None, None), *far[:7], None,
                                      None, None, None) is None
        assert len(calls) == n and (scalars, far[0].shape, None) not in runner._eager
    finally:
        runner.forget_eager()


def test_a_dense_state_call_gets_final_states_for_its_own_batch_size(cuda_queries):
    """Decode with a dense initial state and ``output_final_state``: an entry made from the elastic
    one allocates the final states for the call's N."""
    HV, calls = 4, []
    cfg = rec.config_for(2 * HV, varlen=False)
    bound = rec.BoundLaunch(_raw(calls), 128 // cfg.block_v * 2 * HV, _tail(2, 1), 0, False, True, True)
    recorded = runner.eager_tensors(*_batch(2, pool=False), None, None)
    entry = runner._EagerCall(runner.tensor_guard(recorded, runner._ELASTIC_BATCH),
                              rec.ElasticDecode(bound, cfg, HV, varlen=False), False, (None, HV, 8, 8), True)
    runner.forget_eager()
    try:
        q, k, v, g, beta, state, _, _ = call = _batch(5, pool=False)
        o, ht = runner._elastic_decode(entry, (("test-dense",), q.shape, None), runner.eager_tensors(*call, None, None), q, k, v,
                                       g, beta, state, None, None, None, None, None)
        assert ht.shape == (5, HV, 8, 8) and ht.dtype == torch.float32
        assert calls[-1][12] == state.data_ptr() and calls[-1][13] == ht.data_ptr()
    finally:
        runner.forget_eager()


def test_decode_recordings_keep_an_exact_and_an_elastic_entry():
    """``runner.remember_eager`` for a decode call: the exact entry (keyed by scalars and N) and
    the elastic one; a later recording after an elastic entry declined (a config it had not seen)
    learns that entry's configs and replaces it."""

    class Launch:
        layout, repeats_recorded_shapes = None, False  # as ElasticDecode

        def __init__(self):
            self.learned = []

        def learn(self, other):
            self.learned.append(other)

    tensors = runner.eager_tensors(*_batch(3), None, None)
    scalars = ("test-decode-remember",)
    runner.forget_eager()
    try:
        runner.remember_eager(((scalars, tensors[0].shape, None), tensors, True, True, runner._ELASTIC_BATCH),
                              "bound", True, None, False,
                              Launch())
        assert [e.launch for e in runner._eager[(scalars, tensors[0].shape, None)]] == ["bound"]
        old = runner._elastic[scalars][0]
        newer = Launch()
        at64 = runner.eager_tensors(*_batch(64), None, None)
        runner.remember_eager(((scalars, at64[0].shape, None), at64, False, (old,), runner._ELASTIC_BATCH),
                              "bound64", True, None, False,
                              newer)
        assert newer.learned == [old.launch] and [e.launch for e in runner._elastic[scalars]] == [newer]
        assert (scalars, at64[0].shape, None) not in runner._eager  # these exact shapes not seen before
        assert runner._elastic[scalars][0].guard.check(*runner.eager_tensors(*_batch(9), None, None))
    finally:
        runner.forget_eager()
