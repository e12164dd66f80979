"""Tests of the stream-K variant of the skinny linear (``SkinnyConfig.programs > 0``).

CPU tests run the kernel in Triton's interpreter in fp16 (``device`` fixture: CUDA when
present); tests marked ``gpu`` run bf16 at the issue's shapes on a real GPU.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
import torch

import kimiops.gemm.linear as lin
from kimiops.gemm import dispatch, scratch, skinny
from kimiops.gemm.linear import linear
from kimiops.gemm.skinny import SkinnyConfig, block_m_for, fit_stages, skinny_linear, streamk_max_pieces
from kimiops.testing import rel_err

from test_linear import _cublas_ref, make, reference  # tests/gemm is on sys.path (rootdir conftest)


def sk(programs, block_n=32, block_m=16, block_k=32, **kw):
    """A stream-K config (``k_split`` is unused by stream-K)."""
    return SkinnyConfig(block_n=block_n, block_m=block_m, block_k=block_k, k_split=block_k, programs=programs, **kw)


def pieces_per_tile(N, K, block_n, block_k, programs):
    """Brute force: how many programs share each output tile (the partition the kernel uses)."""
    n_tiles, k_tiles = -(-N // block_n), -(-K // block_k)
    units = n_tiles * k_tiles
    p = min(programs, units)
    owner = [next(q for q in range(p) if q * units // p <= u < (q + 1) * units // p) for u in range(units)]
    return [len(set(owner[t * k_tiles:(t + 1) * k_tiles])) for t in range(n_tiles)]


# (N, K, programs, most programs sharing a tile): block_n = block_k = 32.
# 96x192: 3 x 6 units; 80x200: ragged N (last tile 16 rows) and K (last tile 8 columns), 3 x 7.
CASES = [
    (96, 192, 3, 1),    # whole tiles only: no hand-off
    (96, 192, 6, 2),    # every tile in two halves
    (96, 192, 9, 3),    # every tile in three pieces
    (96, 192, 5, 3),    # ranges across tile ends, one range inside a single tile
    (80, 200, 4, 2),    # ragged N and K, heads and tails
    (80, 200, 8, 3),
    (80, 200, 24, 7),   # more programs than units (21): one unit each, 3 idle
]


def test_cases_cover_1_2_and_3_pieces():
    for N, K, P, most in CASES:
        assert max(pieces_per_tile(N, K, 32, 32, P)) == most, (N, K, P)
    assert {c[3] for c in CASES} >= {1, 2, 3}


@pytest.mark.parametrize("N,K,P,most", CASES, ids=lambda v: str(v))
@pytest.mark.parametrize("bias", [False, True], ids=["nobias", "bias"])
def test_streamk_matches_fp64_reference(device, N, K, P, most, bias):
    for M in (1, 3, 20):  # 20 > block_m: two token tiles on grid axis 1
        x, w, b = make(M, N, K, device, bias=bias, seed=M + N + K + P)
        ref = reference(x, w, b)
        out32 = torch.full((M, N), float("nan"), device=device)
        assert skinny_linear(x, w, b, out32, sk(P)) is out32
        assert rel_err(out32, ref) <= 1e-5, (M, rel_err(out32, ref))  # fp32 accumulator, one rounding
        out16 = torch.full((M, N), float("nan"), device=device, dtype=torch.float16)
        skinny_linear(x, w, b, out16, sk(P))
        assert torch.equal(out16, out32.half())  # the same fp32 result, rounded once
        assert rel_err(out16, ref) <= 1.5 * rel_err(linear(x, w, b, backend="cublas"), ref) + 1e-6


def test_streamk_is_batch_invariant_deterministic_and_resets_counters(device):
    N, K = 80, 200
    x, w, b = make(20, N, K, device, seed=3)
    for P in (5, 8):
        full = skinny_linear(x, w, b, torch.empty(20, N, device=device, dtype=x.dtype), sk(P, block_m=32))
        for M in (1, 5, 16, 17):  # block_m 16 and 32: different token tiles, same row bits
            part = skinny_linear(x[:M], w, b, torch.empty(M, N, device=device, dtype=x.dtype),
                                 sk(P, block_m=block_m_for(M)))
            assert torch.equal(part, full[:M]), (P, M)
        perm = torch.randperm(20)
        shuffled = skinny_linear(x[perm], w, b, torch.empty(20, N, device=device, dtype=x.dtype), sk(P, block_m=32))
        assert torch.equal(shuffled, full[perm])
        again = skinny_linear(x, w, b, torch.empty(20, N, device=device, dtype=x.dtype), sk(P, block_m=32))
        assert torch.equal(again, full)
        pdl = skinny_linear(x, w, b, torch.empty(20, N, device=device, dtype=x.dtype), sk(P, block_m=32, pdl=True))
        assert torch.equal(pdl, full)  # pdl changes the launch, never the bits
    counters = [t for (dev, _), t in scratch._counters.items() if dev == x.device]
    assert counters and all(int(c.count_nonzero()) == 0 for c in counters)


def test_streamk_whole_tiles_match_the_classic_kernel(device):
    """When no tile is shared (programs own whole tiles) the sum order is the classic one without
    a K split, chunk flushes at the same absolute K offsets included (K = 2560: 3 chunks)."""
    x, w, b = make(5, 96, 2560, device)
    classic = skinny_linear(x, w, b, torch.empty(5, 96, device=device),
                            SkinnyConfig(block_n=32, block_m=16, block_k=128, k_split=2560))
    for P in (1, 3):
        got = skinny_linear(x, w, b, torch.empty(5, 96, device=device), sk(P, block_k=128))
        assert torch.equal(got, classic), P
    split = skinny_linear(x, w, b, torch.empty(5, 96, device=device), sk(7, block_k=128))  # pieces mid-chunk
    assert rel_err(split, reference(x, w, b)) <= 1e-5


def test_streamk_with_more_tiles_than_a_counter_block(device, monkeypatch):
    x, w, b = make(20, 96, 192, device)  # 3 x 2 output tiles
    want = skinny_linear(x, w, b, torch.empty(20, 96, device=device, dtype=x.dtype), sk(9))
    monkeypatch.setattr(scratch, "COUNTER_BLOCK", 4)  # 6 tiles: fresh zeroed counters per call
    got = skinny_linear(x, w, b, torch.empty(20, 96, device=device, dtype=x.dtype), sk(9))
    assert torch.equal(got, want)


def test_streamk_m_zero_launches_nothing(device, monkeypatch):
    monkeypatch.setattr(skinny, "_streamk_linear_kernel", None)  # any launch would raise
    x = torch.empty(0, 64, device=device, dtype=torch.float16)
    w = torch.randn(96, 64, device=device, dtype=torch.float16)
    out = torch.empty(0, 96, device=device, dtype=torch.float16)
    assert skinny_linear(x, w, None, out, sk(132)) is out


def test_streamk_max_pieces_is_exact():
    for n_tiles in range(1, 9):
        for k_tiles in range(1, 11):
            for P in range(1, 40):
                most = max(pieces_per_tile(n_tiles * 16, k_tiles * 16, 16, 16, P))
                bound = streamk_max_pieces(n_tiles * 16, k_tiles * 16, 16, 16, P)
                assert bound == most, (n_tiles, k_tiles, P)
    assert streamk_max_pieces(6144, 6144, 64, 128, 132) == 3  # 96 x 48 units: 34-35 per program
    assert streamk_max_pieces(6144, 6144, 64, 128, 96) == 1  # one weight tile per program: no hand-off


@pytest.mark.parametrize("programs", [-1, True, 1.5, "132"])
def test_config_rejects_bad_programs(programs):
    with pytest.raises(ValueError, match="programs"):
        SkinnyConfig(block_n=64, block_m=16, block_k=128, k_split=128, programs=programs)


def _table(tmp_path, programs, shape="96x192"):
    entry = {"block_k": 32, "k_split": 192, "block_n": 32, "programs": programs,
             "buckets": [{"m_max": 4, "backend": "triton", "block_m": 16, "num_warps": 4, "num_stages": 3}]}
    path = tmp_path / "sm90.json"
    path.write_text(json.dumps({"format": 2, "family": "sm90", "shapes": {shape: entry}}))
    return path


def test_dispatch_reads_programs_and_forced_triton_runs_streamk(tmp_path, monkeypatch):
    _table(tmp_path, 9)
    monkeypatch.setattr(dispatch, "TABLE_DIR", tmp_path)
    monkeypatch.setattr(lin, "device_family", lambda device: "sm90")
    dispatch.table_for.cache_clear()
    try:
        assert dispatch.table_for("sm90")["96x192"].programs == 9
        want = SkinnyConfig(block_n=32, block_m=16, block_k=32, k_split=192, num_stages=3, programs=9)
        assert dispatch.auto_config("sm90", 3, 96, 192) == want
        beyond = dispatch.triton_config("sm90", 20, 96, 192)  # beyond the buckets: same K order
        assert (beyond.block_n, beyond.block_k, beyond.programs, beyond.block_m) == (32, 32, 9, 32)
        x, w, b = make(20, 96, 192, "cpu")
        y = linear(x, w, b, backend="triton")
        assert torch.equal(y, skinny_linear(x, w, b, torch.empty_like(y), beyond))
        assert torch.equal(linear(x[:3], w, b, backend="triton"), y[:3])  # bucket config, same bits
    finally:
        dispatch.table_for.cache_clear()


@pytest.mark.parametrize("programs,match", [(-1, "programs"), ("132", "programs"), (1.0, "programs")])
def test_dispatch_rejects_bad_programs(tmp_path, programs, match):
    path = _table(tmp_path, programs)
    with pytest.raises(ValueError, match=match):
        dispatch.parse_table(json.loads(path.read_text()), str(path))


def test_tables_without_programs_run_the_classic_grid(tmp_path):
    path = _table(tmp_path, 0)
    data = json.loads(path.read_text())
    del data["shapes"]["96x192"]["programs"]
    entry = dispatch.parse_table(data, "t")["96x192"]
    assert entry.programs == 0 and entry.buckets[0].config.programs == 0


def _bench_module():
    path = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_linear.py"
    spec = importlib.util.spec_from_file_location("bench_linear", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_bench_sweeps_streamk_candidates_and_records_programs():
    bench = _bench_module()
    classic = bench.shape_candidates(6144, 6144, (64, 128))
    both = bench.shape_candidates(6144, 6144, (64, 128), 132)
    assert all(p == 0 for _, _, p in classic)
    assert both[:len(classic)] == classic and both[len(classic):] == [(64, 6144, 132), (128, 6144, 132)]
    jobs = bench.sweep_jobs([(6144, 6144)], (1, 8), (64,), 132)
    assert {j[3]["programs"] for j in jobs} == {0, 132}
    assert all(SkinnyConfig(**j[3]) for j in jobs)  # every job is a valid config
    assert all(j[3]["programs"] == 0 for j in bench.sweep_jobs([(6144, 6144)], (1,), (64,)))  # --no-streamk

    def cfg(programs, ks):
        return SkinnyConfig(block_n=64, block_m=16, block_k=128, k_split=ks, programs=programs)

    cublas = {1: 10.0, 8: 10.0}
    ours = {(64, 6144, 0): {M: [(cfg(0, 6144), 9.0)] for M in cublas},
            (64, 6144, 132): {M: [(cfg(132, 6144), 8.0), (cfg(132, 6144), None)] for M in cublas}}
    (bn, ks, programs), buckets, record = bench.choose(cublas, ours, 1.03)
    assert (bn, ks, programs) == (64, 6144, 132)
    assert [r["programs"] for r in record] == [0, 132]
    table = {"format": dispatch.TABLE_FORMAT, "family": "sm90",
             "shapes": {"6144x6144": {"block_k": 128, "k_split": ks, "block_n": bn, "programs": programs,
                                      "buckets": buckets}}}
    entry = dispatch.parse_table(table, "generated")["6144x6144"]
    assert entry.programs == 132 and entry.buckets[0].config == cfg(132, 6144)


# ---------------------------------------------------------------------------------------------
# GPU (bf16, the shapes)

GPU_SHAPES = [(6144, 2048), (6144, 6144), (7168, 2048), (2048, 7168), (1024, 6144)]


def _gpu_config(N, K, M, block_n=64, pdl=True):
    programs = torch.cuda.get_device_properties(0).multi_processor_count
    bm = block_m_for(M)
    return SkinnyConfig(block_n=block_n, block_m=bm, block_k=128, k_split=-(-K // 128) * 128,
                        num_stages=fit_stages(block_n, bm, 128, 6), pdl=pdl, programs=programs)


@pytest.mark.gpu
@pytest.mark.parametrize("N,K", GPU_SHAPES, ids=lambda v: str(v))
@pytest.mark.parametrize("block_n", [64, 128])
def test_gpu_streamk_correct_every_m(N, K, block_n):

    x64, w, b = make(64, N, K, "cuda", dtype=torch.bfloat16, seed=N + K)
    ref64 = reference(x64, w, b)
    for M in range(1, 65):
        x, ref = x64[:M], ref64[:M]
        cfg = _gpu_config(N, K, M, block_n)
        for out_dtype in (torch.bfloat16, torch.float32):
            for bias in (b, None):
                want = ref if bias is not None else reference(x, w, None)
                out = torch.full((M, N), float("nan"), device="cuda", dtype=out_dtype)
                skinny_linear(x, w, bias, out, cfg)
                ours, theirs = rel_err(out, want), rel_err(_cublas_ref(x, w, bias, out_dtype), want)
                assert ours <= 1.5 * theirs, (M, out_dtype, bias is None, ours, theirs)


@pytest.mark.gpu
@pytest.mark.parametrize("N,K", GPU_SHAPES, ids=lambda v: str(v))
def test_gpu_streamk_deterministic_across_runs_and_batches(N, K):
    x64, w, b = make(64, N, K, "cuda", dtype=torch.bfloat16, seed=1)
    full = skinny_linear(x64, w, b, torch.empty(64, N, device="cuda", dtype=torch.bfloat16), _gpu_config(N, K, 64))
    for _ in range(3):
        again = skinny_linear(x64, w, b, torch.empty_like(full), _gpu_config(N, K, 64))
        assert torch.equal(again, full)
    for M in range(1, 65):  # every token tile: row bits never change
        for pdl in (False, True):
            got = skinny_linear(x64[:M], w, b, torch.empty(M, N, device="cuda", dtype=torch.bfloat16),
                                _gpu_config(N, K, M, pdl=pdl))
            assert torch.equal(got, full[:M]), (M, pdl)
    perm = torch.randperm(64, device="cuda")
    got = skinny_linear(x64[perm], w, b, torch.empty_like(full), _gpu_config(N, K, 64))
    assert torch.equal(got, full[perm])


@pytest.mark.gpu
def test_gpu_streamk_pdl_chain_and_graph_replay():
    """Back-to-back dependent stream-K calls (PDL overlaps them; each reads the previous output
    and reuses the same scratch) give the bits of separate calls, eagerly and in a CUDA graph."""
    N = K = 2048
    x, w, _ = make(8, N, K, "cuda", dtype=torch.bfloat16, seed=2)
    cfg = _gpu_config(N, K, 8)

    def chain(x0):
        y1 = skinny_linear(x0, w, None, torch.empty(8, N, device="cuda", dtype=torch.bfloat16), cfg)
        y2 = skinny_linear(y1, w, None, torch.empty_like(y1), cfg)
        return skinny_linear(y2, w, None, torch.empty_like(y2), cfg)

    want = x
    for _ in range(3):
        want = skinny_linear(want, w, None, torch.empty(8, N, device="cuda", dtype=torch.bfloat16),
                             _gpu_config(N, K, 8, pdl=False))
        torch.cuda.synchronize()
    assert torch.equal(chain(x), want)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        y = chain(x)
    for seed in (5, 6):
        x.copy_(make(8, N, K, "cuda", dtype=torch.bfloat16, seed=seed)[0])
        graph.replay()
        torch.cuda.synchronize()
        assert torch.equal(y, chain(x))


@pytest.mark.gpu
def test_gpu_streamk_weight_over_2_31_elements():
    """int64 weight-row offsets: rows past 2^31 elements are read correctly."""
    N, K = 131200, 16384  # 2.15e9 elements (4.3 GB bf16)
    w = torch.empty(N, K, device="cuda", dtype=torch.bfloat16).normal_(std=K**-0.5)
    x = torch.randn(3, K, device="cuda", dtype=torch.bfloat16)
    y = skinny_linear(x, w, None, torch.empty(3, N, device="cuda"), _gpu_config(N, K, 3))
    for rows in (slice(0, 64), slice(N - 192, N)):
        assert rel_err(y[:, rows], reference(x, w[rows], None)) <= 1e-5
