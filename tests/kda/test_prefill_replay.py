"""``BoundPrefill`` (the eager prefill shortcut's replay) on CPU tensors with the CUDA queries and
the launch entry stubbed: which arguments are the call's tensors, which are scratch, and when a
call cannot be bound. The replay itself runs in the GPU tests of ``test_chunk_kernel.py``."""

import torch

from kimiops.kda.kernels.chunk import BoundPrefill


def _call(T=4):
    """A call's tensors ``(q, k, v, g, beta, h0, h0_indices, ht, ht_indices, cu_seqlens, A_log,
    dt_bias)`` (pool mode: h0 is ht) and a plan holding its o and scratch."""
    q, k, g = (torch.randn(1, T, 2, 8) for _ in range(3))
    v, beta = torch.randn(1, T, 2, 8), torch.randn(1, T, 2)
    pool, idx = torch.zeros(3, 2, 8, 8), torch.zeros(1, dtype=torch.int32)
    tensors = (q, k, v, g, beta, pool, idx, pool, idx, None, None, None)
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
    o = bound(q2, k2, v2, g2, beta2, pool2, idx2, pool2, idx2, None, None, None)
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
    a prefill call's key holds every tensor's 16-byte alignment, and the stream."""
    from kimiops.kda.runner import prefill_launch_context

    buf = torch.empty(2 * 4 * 2 * 8 + 8)
    q, shifted = buf[:64].view(1, 4, 2, 8), buf[1:65].view(1, 4, 2, 8)   # same shape and strides
    base = prefill_launch_context(q, q, q, q, q, None, None, None, None, None)
    assert prefill_launch_context(q, shifted, q, q, q, None, None, None, None, None) != base
    cuda_queries.stream = 78
    assert prefill_launch_context(q, q, q, q, q, None, None, None, None, None) != base
