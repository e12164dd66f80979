"""``KDABackend.warmup``: after it, serving's extends meet no kernel variant it did not launch, and the
pool is untouched. CPU: the chunked prefill's launches are stubbed and recorded with the compiled
variant each would use (the ``prefill_launches`` fixture), or every kernel runs in the
interpreter (the pool check); decode runs in the interpreter. One test compiles the warm-up's kernels
for sm_90 offline (Triton's own compiler, no launch)."""
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from kimiops import KDABackend
from kimiops.kda.kernels.chunk_layout import elastic_layout, order_block
from kimiops.kda.warmup import decode_batches, extend_batches

H = HV = 4
K = V = 16


def _extend(backend, pool, lens, gate):
    T = sum(lens)
    q, k = (torch.randn(1, T, H, K, dtype=torch.float16) for _ in range(2))
    v, g = torch.randn(1, T, HV, V, dtype=torch.float16), torch.randn(1, T, HV, K, dtype=torch.float16)
    beta = torch.randn(1, T, HV, dtype=torch.float16)
    cu = torch.tensor([0, *torch.tensor(lens).cumsum(0).tolist()], dtype=torch.int32)
    idx = torch.arange(len(lens), dtype=torch.int32)
    backend.extend(q, k, v, g, beta, ssm_states=pool, cache_indices=idx, query_start_loc=cu, **gate)


@pytest.mark.parametrize("gate_mode", ["g", "softplus", "lower_bound"])
def test_extends_after_warmup_launch_no_new_kernel_variant(cuda_queries, prefill_launches, gate_mode):
    """Random extends of 1-40 requests of 1-3,000 tokens (every layout at 4 heads: one part with and
    without the sort, sort blocks 32 and 64, pipelined parts, segments) launch only the (kernel,
    compiled variant) pairs the warm-up launched, and the warm-up leaves every pool slot's bits."""
    gate = {"g": {}, "softplus": dict(A_log=torch.randn(HV), dt_bias=torch.randn(HV * K)),
            "lower_bound": dict(A_log=torch.randn(HV), lower_bound=-5.0)}[gate_mode]
    calls = prefill_launches
    backend = KDABackend(H, K, V, backend="triton")
    pool = torch.randn(40, HV, V, K)
    before = pool.clone()
    ran = backend.warmup(pool, dtype=torch.float16, max_requests=40, **gate)
    assert torch.equal(pool, before)
    assert ran == {"extend": extend_batches(HV, K, 40), "decode": decode_batches(HV, 40, False),
                   "decode_cu_seqlens": decode_batches(HV, 40, True), "compiled_in_background": 0}
    warm = {(c[4], c[5]) for c in calls}
    assert {name for name, _ in warm} == {"chunk_intra_kernel", "chunk_state_kernel", "longest_first_kernel",
                                         "segment_starts_kernel"}
    rng = random.Random(0)
    for _ in range(60):
        lens = [rng.randint(1, 3000) for _ in range(rng.choice([1, 1, 2, 5, 33, 40]))]
        calls.clear()
        _extend(backend, pool, lens, gate)
        assert {(c[4], c[5]) for c in calls} <= warm, lens


def test_warmup_on_threads_compiles_first_then_launches_what_one_thread_launches(cuda_queries, prefill_launches):
    """With two compile threads the warm-up first launches nothing and starts one compile per kernel
    variant, every variant its real pass then launches; that pass launches the variants of a warm-up
    on one thread, in the same order, and the pool keeps its bits."""
    calls = prefill_launches
    gate = dict(A_log=torch.randn(HV), dt_bias=torch.randn(HV * K))
    pool = torch.randn(40, HV, V, K)
    before = pool.clone()
    KDABackend(H, K, V, backend="triton").warmup(pool, dtype=torch.float16, max_requests=40, compile_workers=1,
                                                 **gate)
    serial = [(c[4], c[5]) for c in calls]
    assert all(c[0] != "compile" for c in calls)
    calls.clear()
    ran = KDABackend(H, K, V, backend="triton").warmup(pool, dtype=torch.float16, max_requests=40,
                                                       compile_workers=2, **gate)
    compiles = [c for c in calls if c[0] == "compile"]
    launched = [(c[4], c[5]) for c in calls[len(compiles):]]
    assert calls[:len(compiles)] == compiles  # nothing launched before the last compile started
    assert ran["compiled_in_background"] == len(compiles) == len(set(compiles))
    assert {c[1:] for c in compiles} == set(launched)
    assert launched == serial
    assert torch.equal(pool, before)


def test_warmup_kernels_compile_for_sm90_on_threads(tmp_path):
    """The warm-up's first pass with Triton's own compiler, offline for sm_90 on two threads
    (``benchmarks/tools/warmup_compile_offline.py``: the driver stubbed, nothing launched; 2 heads of 16,
    40 requests, bf16, the softplus gate): every variant it meets compiles, so what ``jit_launch`` hands
    Triton's ``warmup`` is what each kernel takes, and the same calls again find every one in Triton's
    cache (as the real pass does before it launches). The counts: stage 1 as one part or a chain's first
    part and as a later part, five state-stage forms, the sort's blocks of 32 and 64, the segment
    starts, six decode tile configs."""
    root = Path(__file__).resolve().parents[2]
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}  # the interpreter compiles nothing
    env.update(TRITON_CACHE_DIR=str(tmp_path), PYTHONPATH=os.pathsep.join([str(root), str(root / "benchmarks/tools")]))
    out = subprocess.run([sys.executable, str(root / "benchmarks/tools/warmup_compile_offline.py"), "--one", "2",
                          "--heads", "2", "--dim", "16", "--max-requests", "40"],
                         env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    res = json.loads(out.stdout.strip().splitlines()[-1])
    assert res["failed"] == [] and res["compiled_again"] == 0  # the real pass would find each one compiled
    assert res["variants"] == {"chunk_intra_kernel": 2, "chunk_state_kernel": 5, "longest_first_kernel": 2,
                               "segment_starts_kernel": 1, "_recurrent_kda_fwd_kernel": 6}


def test_warmup_covers_every_layout_form_and_sort_block():
    """The extends it picks: the smallest call of each layout form (``elastic_layout``) and sort
    block up to ``max_requests``: segments only where the heads are few."""
    def forms(HV, max_requests):
        out = set()
        for lens in extend_batches(HV, 128, max_requests):
            form = elastic_layout(sum(lens), len(lens), HV, 128)[0]
            out.add((form[0], form[1] if form[0] != "segments" else None,
                     order_block(len(lens)) if form[0] != "segments" and form[1] else None))
        return out

    assert forms(32, 256) == {("one", False, None), ("one", True, 32), ("one", True, 64), ("one", True, 128),
                              ("one", True, 256), ("parts", False, None)}
    assert forms(4, 1) == {("one", False, None), ("parts", False, None), ("segments", None, None)}
    assert max(sum(lens) for lens in extend_batches(4, 128, 256)) <= 4096


@pytest.mark.gpu
def test_gpu_extends_and_decodes_after_warmup_compile_nothing():
    """On a GPU (bf16, 32 heads of 128, the softplus gate): the warm-up on 4 compile threads compiles
    every kernel there (its real pass adds none to Triton's caches), and after it random extends of
    1-40 requests and decode steps of 1-40 requests (with and without ``query_start_loc``) add no
    compiled kernel to any KDA kernel's Triton cache; the warm-up leaves the pool's bits."""
    from kimiops.kda.kernels import chunk, recurrent

    H32, D = 32, 128
    dev = torch.device("cuda")
    kernels = [chunk.chunk_intra_kernel, chunk.chunk_state_kernel, chunk.longest_first_kernel,
               chunk.segment_starts_kernel, recurrent._recurrent_kda_fwd_kernel]
    compiled = lambda: [len(kn.device_caches[torch.cuda.current_device()][0]) for kn in kernels]  # noqa: E731
    backend = KDABackend(H32, D, D)
    pool = torch.randn(48, H32, D, D, device=dev)
    before = pool.clone()
    gate = dict(A_log=torch.rand(H32, device=dev), dt_bias=torch.randn(H32 * D, device=dev))
    cold = compiled()
    ran = backend.warmup(pool, max_requests=40, compile_workers=4, **gate)
    torch.cuda.synchronize()
    assert torch.equal(pool, before)
    warm = compiled()
    assert sum(warm) - sum(cold) == ran["compiled_in_background"]  # the real pass compiled nothing
    rng = random.Random(1)
    for _ in range(12):
        lens = [rng.randint(1, 3000) for _ in range(rng.choice([1, 2, 7, 33, 40]))]
        T = sum(lens)
        x = [torch.randn(1, T, H32, D, device=dev, dtype=torch.bfloat16) for _ in range(4)]
        beta = torch.randn(1, T, H32, device=dev, dtype=torch.bfloat16)
        cu = torch.tensor([0, *lens], dtype=torch.int32).cumsum(0, dtype=torch.int32).to(dev)
        idx = torch.arange(len(lens), dtype=torch.int32, device=dev)
        backend.extend(*x, beta, ssm_states=pool, cache_indices=idx, query_start_loc=cu, **gate)
        n = len(lens)
        x = [torch.randn(1, n, H32, D, device=dev, dtype=torch.bfloat16) for _ in range(4)]
        beta = torch.randn(1, n, H32, device=dev, dtype=torch.bfloat16)
        backend.decode(*x, beta, ssm_states=pool, cache_indices=idx, **gate)
        cu = torch.arange(n + 1, dtype=torch.int32, device=dev)
        backend.decode(*x, beta, ssm_states=pool, cache_indices=idx, query_start_loc=cu, **gate)
    torch.cuda.synchronize()
    assert compiled() == warm


def test_warmup_runs_nothing_on_the_torch_path():
    """The torch path compiles nothing: the warm-up runs no call there (on the CPU it would be slow)."""
    backend = KDABackend(H, K, V, backend="torch")
    pool = torch.randn(2, HV, V, K)
    before = pool.clone()
    assert backend.warmup(pool) == {"extend": [], "decode": [], "decode_cu_seqlens": [], "compiled_in_background": 0}
    assert torch.equal(pool, before)


def test_warmup_kernels_neither_read_nor_write_the_pool():
    """The warm-up's kernels themselves (interpreter, 2 heads of 16, the softplus gate: extends in one
    part, with the sort, in pipelined parts and in segments, and decode steps) leave a pool of NaN
    bit for bit: padded requests read no slot and write none."""
    backend = KDABackend(2, 16, 16, backend="triton")
    pool = torch.full((4, 2, 16, 16), float("nan"))
    bits = pool.view(torch.int32).clone()
    ran = backend.warmup(pool, dtype=torch.float16, max_requests=40, A_log=torch.randn(2), dt_bias=torch.randn(32))
    forms = {elastic_layout(sum(lens), len(lens), 2, 16)[0][0] for lens in ran["extend"]}
    assert forms == {"one", "parts", "segments"}
    assert ran["decode"] and ran["decode_cu_seqlens"]
    assert torch.equal(pool.view(torch.int32), bits)


@pytest.mark.parametrize("HV", [1, 4, 32, 64])
@pytest.mark.parametrize("varlen", [False, True])
def test_warmup_decodes_cover_every_tile_config(HV, varlen):
    """The decode kernel compiles per tile config (``recurrent.config_for`` of ``N * HV``, a table per
    form): the warm-up's batch sizes meet every config that 1-300 requests meet, smallest first."""
    from kimiops.kda.kernels.recurrent import config_for

    counts = decode_batches(HV, 300, varlen)
    assert counts == sorted(counts) and counts[0] == 1
    assert {config_for(n * HV, varlen) for n in counts} == {config_for(n * HV, varlen) for n in range(1, 301)}
    assert len({config_for(n * HV, varlen) for n in counts}) == len(counts)


def test_warmup_rejects_bad_arguments():
    backend = KDABackend(H, K, V)
    pool = torch.zeros(2, HV, V, K)
    with pytest.raises(ValueError, match="^ssm_states: expected"):
        backend.warmup(torch.zeros(2, HV, K, V + 1))
    with pytest.raises(TypeError, match="^dtype: expected a floating torch.dtype"):
        backend.warmup(pool, dtype=torch.int32)
    with pytest.raises(TypeError, match="^gate_dtype: expected a floating torch.dtype"):
        backend.warmup(pool, gate_dtype="fp32")
    with pytest.raises(ValueError, match="^max_requests: expected a positive int"):
        backend.warmup(pool, max_requests=0)
    with pytest.raises(ValueError, match="^compile_workers: expected a positive int, got 0"):
        backend.warmup(pool, compile_workers=0)
