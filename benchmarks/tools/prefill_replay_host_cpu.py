"""Host-side Python cost of the eager prefill replays, measured on a CPU machine (no GPU needed).

Records real calls of ``chunk.chunk_kda_fwd`` on CPU tensors with the launches stubbed (an entry
that does nothing) and the CUDA queries stubbed, then times ``ElasticPrefill.__call__`` over calls
with new token counts in each layout (one part: one request and a batch of four at 32 heads;
pipelined parts: one prompt at 32 heads; segments: one prompt at 4 heads) and
``BoundPrefill.__call__`` repeating one call; also the elastic replay of calls whose counts are the
previous call's (a model's layers one after the other), which reuse its launches. The launches themselves and the CUDA stream query
cost nothing here, so these are the Python of a replay alone (on the H200 host Python runs about
2.5x slower, see docs/history/decode.md).

    python benchmarks/tools/prefill_replay_host_cpu.py
"""
import collections
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
import stub_launches  # noqa: E402

from kimiops.bench.timing import loop_us  # noqa: E402
from kimiops.kda.kernels import chunk  # noqa: E402
from kimiops.kda.workspace import empty_cache  # noqa: E402

K = 128


def pool_call(lens, heads, pool):
    T = sum(lens)
    q, k, v, g = (torch.empty(1, T, heads, K, dtype=torch.bfloat16) for _ in range(4))
    beta = torch.empty(1, T, heads, dtype=torch.bfloat16)
    cu = torch.tensor([0, *torch.tensor(lens).cumsum(0).tolist()], dtype=torch.int32)
    idx = torch.arange(len(lens), dtype=torch.int32)
    kw = dict(scale=K ** -0.5, cu_seqlens=cu, h0=pool, h0_indices=idx, ht=pool, ht_indices=idx, state_v_first=True,
              use_qk_l2norm=True, use_beta_sigmoid=True, gate="softplus", A_log=torch.zeros(heads), dt_bias=None,
              lower_bound=None)
    args = (q, k, v, g, beta, pool, idx, pool, idx, cu, kw["A_log"], None)
    return (q, k, v, g, beta), kw, args


def main():
    stub_launches.install(collections.deque(maxlen=0))  # launches go nowhere: only a replay's Python is timed
    cases = {  # name: heads, the recorded call, the calls timed (new token counts)
        "one part, 1 request": (32, [512], [[64 + 7 * i] for i in range(40)]),
        "one part, 4 requests": (32, [256] * 4, [[32 + i, 40, 100 + 3 * i, 64] for i in range(40)]),
        "4 parts, 1 prompt": (32, [4096], [[3000 + 16 * i] for i in range(40)]),
        "segments, 1 prompt at 4 heads": (4, [8192], [[4096 + 32 * i] for i in range(40)]),
    }
    for name, (heads, first, later) in cases.items():
        empty_cache()
        pool = torch.zeros(4, heads, K, K)
        x, kw, first_args = pool_call(first, heads, pool)
        bind = []
        chunk.chunk_kda_fwd(*x, bind=bind, **kw)
        bound, elastic = bind
        calls = [pool_call(lens, heads, pool) for lens in later]
        for x, kw, args in calls:  # learn every kernel variant the calls reach, as the runner does
            if elastic(*args) is None:
                again = []
                chunk.chunk_kda_fwd(*x, bind=again, **kw)
                again[1].learn(elastic)
                elastic = again[1]
        assert all(elastic(*args) is not None for _, _, args in calls), name
        T, N = calls[0][2][0].shape[1], calls[0][2][9].shape[0] - 1
        launches = len(elastic._schedule(T, N, *chunk.elastic_layout(T, N, heads, K)[1:]))
        it = iter([args for _, _, args in calls] * 1000)
        us = loop_us(lambda: elastic(*next(it)))
        it = iter([args for _, _, args in calls] * 1000)
        alloc = loop_us(lambda: torch.empty_like(next(it)[2]))  # the replay's o, which the GPU's caching allocator serves faster
        same = calls[0][2]
        s_us = loop_us(lambda: elastic(*same))  # the previous call's counts (a model's next layer)
        b_us = loop_us(lambda: bound(*first_args))
        print(f"{name}: ElasticPrefill.__call__ {us:.1f} us per call with new counts ({launches} launches; of which "
              f"o's allocation {alloc:.1f}), {s_us:.1f} us with the previous call's; BoundPrefill.__call__ "
              f"{b_us:.1f} us", flush=True)


if __name__ == "__main__":
    main()
