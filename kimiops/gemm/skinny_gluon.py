"""Gluon small-M linear for Hopper whose weight stream starts before the PDL wait.

What it computes
    ``y[M, N] = x[M, K] @ W[N, K]^T (+ bias)`` for ``M <= 32``, as ``y^T = W x^T`` per program:
    ``BLOCK_N = 64`` weight rows (the wgmma's M side) times the token rows padded to 16 or 32
    (its N side), over a K range of ``k_split`` elements. bf16 or fp16 inputs.

Why a second kernel (``skinny.py`` is the first)
    A linear in a decode step waits for the previous kernel's ``x``. With programmatic dependent
    launch it may start while that kernel runs, but the Triton kernel cannot put weight loads
    into its shared-memory pipeline before the wait without putting ``x``'s loads there too:
    Triton's pipeliner issues every load of an iteration in the same prologue stage, so it only
    prefetches a little of the weight into L2. Here the pipeline is explicit (TMA + mbarriers):
    the ring's ``STAGES`` weight tiles are requested before ``griddepcontrol.wait`` and ``x``'s
    tiles after it. Measured gain over the Triton kernel (H200, CUDA-graph replay, cold L2;
    ``benchmarks/results/logs_h200_20261130m/r3_gluon_sweep.log``): 3-12% at M = 1 on weights of
    4-24 MiB (1024x2048 3.43 vs 3.90 us), 2-7% on 6144x2048 and 7168x2048 at every M, even or
    worse elsewhere; ``benchmarks/bench_linear.py`` puts it in the table only where it wins.

Contract (the price of the early weight loads)
    With PDL this kernel may start as soon as the kernel before it on the stream lets its
    dependents start. A kernel that never says so lets them start when it completes; kimiops's
    own PDL kernels (both linears, decode, the prefill state stage) say so as they start, before
    their own wait (CUDA C++ Programming Guide, "Programmatic Dependent Launch and
    Synchronization"). So while the weight tiles are requested, the kernel right before may still
    run, and if it released its dependents early, so may the one before it, and so on back to the
    first kernel that did not. None of those may write the weight. Model parameters satisfy this;
    for a weight produced on the fly (e.g. a dequantization) pass ``backend="triton"`` or
    ``"cublas"``, or set ``KIMIOPS_PDL=0``. ``x`` and ``bias`` are read after the wait.

Grid
    ``(cdiv(N, 64), splits)``, ``splits = cdiv(K, k_split)``; one warpgroup per program. With the
    cluster hand-off (below) ``cdiv(N, 64) * splits`` programs along x, in clusters of ``splits``.

Pipeline
    A ring of ``STAGES`` weight tiles ``[64, BLOCK_K]`` and x tiles ``[BM, BLOCK_K]`` in shared
    memory, filled by TMA, one mbarrier per slot and operand. Per K tile: wait for both, ``wgmma``
    (A = weight tile, B = the x tile transposed in place), wait for it, refill the slot with the
    tile ``STAGES`` ahead. Rows of x past M, weight rows past N and columns past K read as zeros
    (TMA bounds). ``launch_dependents`` comes first, so the next kernel may be scheduled at once.

Numerics
    fp32 accumulation in chunks of ``CHUNK_K`` (1024) elements added into a running total at fixed
    K offsets within the split, as ``skinny.py``; bias in fp32; one rounding to the output dtype.
    Split-K is deterministic as in ``skinny.py``: fp32 partials ``[splits, M, N]``, an int32
    arrival counter per weight tile, and the last split to arrive sums the partials in the order
    ``0, 1, ..., splits-1`` and resets the counter. The K order is a function of ``(block_k,
    k_split)``, which the table fixes per (N, K, M bucket).

Split-K hand-off in distributed shared memory (``GluonConfig.cluster``, 2-8 splits)
    The splits of one weight tile run as one thread-block cluster (grid ``cdiv(N, 64) * splits``
    CTAs along x, clusters of ``splits``; Hopper clusters of up to 8 CTAs are portable). Each CTA
    writes its fp32 partial to the start of its own shared memory (the rings are done with by then),
    the cluster syncs (``barrier.cluster`` arrive.release / wait.acquire), rank 0 reads the partials
    of ranks ``0, 1, ..., splits-1`` over distributed shared memory (``mapa`` +
    ``ld.shared::cluster``), adds them in that order, the bias, and stores y; a second sync keeps
    every CTA's shared memory alive until rank 0 has read it. Same sums in the same order as the
    global path, so the same bits (GPU test), with no partials, counter or L2 round trips. The
    partial is stored column-major (``[BM, 64]``) so the lanes' consecutive rows hit consecutive
    banks: stored row-major it took 16-way bank conflicts on every remote load, and times grew
    with M and splits (H100, 1024x2048 M = 32, 8 splits: 29.9 us against 4.9 for the global path;
    ``benchmarks/results/logs_20261206_s55/r1_linear_cluster_ab_conflicts.log``). Column-major, on
    the H200 (same runs, same configs; ``r3``/``r4_linear_cluster_ab.log``): 1024x2048 at M = 4, 8,
    16 3.21-3.23 us against 3.59-3.96 for the best global config; within 4% of it either way on
    2624x2048, 6144x2048 and 4096x7168; 3-10% slower on 1024x6144 (6.22 vs 5.63 us at M = 1).
    ``benchmarks/bench_linear.py`` sweeps both; the H200 table of the fifty-fifth session uses it in
    6 of its 55 buckets.
    Gluon's own multi-CTA mode (``num_ctas``) would need CGA layouts on every tensor, so the kernel
    is compiled for one CTA per program and launched through Triton's launcher with ``num_ctas`` =
    splits in its metadata tuple, which sets the launch's cluster dimension.

Requirements (``tma_ready``): x and weight 16-byte aligned with row strides that are multiples of
16 bytes (TMA). ``kimiops.gemm.linear`` runs cuBLAS for calls that do not meet them.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from kimiops.arch import supports_pdl
from kimiops.env import env_var
from kimiops.gemm.scratch import split_k_scratch
from kimiops.gemm.skinny import CHUNK_K, exact_k_split, split_candidates  # CHUNK_K: one chunk for both kernels
from kimiops.intmath import cdiv, next_power_of_2
from kimiops.streams import on_device

try:  # Gluon is Triton's experimental layer (triton >= 3.5); kimiops imports without it
    from triton.experimental import gluon
    from triton.experimental.gluon import language as gl
    from triton.experimental.gluon.language.nvidia.hopper import (fence_async_shared, mbarrier, tma,
                                                                   warpgroup_mma, warpgroup_mma_wait)
    from triton.experimental.gluon.nvidia.hopper import TensorDescriptor
    from triton.language.extra.cuda import gdc_launch_dependents, gdc_wait
except ImportError:  # pragma: no cover - depends on the installed Triton
    gluon = None

#: Weight rows per program: the wgmma's M side.
BLOCK_N = 64
#: Rings swept by ``benchmarks/bench_linear.py``: (block_k, stages). Each won at least one cell of
#: the issue's grid in ``logs_h200_20261130m/r3_gluon_sweep.log`` (H200); (128, 6) won none.
RING_CANDIDATES = ((128, 3), (128, 4), (128, 5), (256, 2), (256, 3), (256, 4))
#: Largest M the kernel takes (token rows padded to 16 or 32 on the wgmma's N side).
MAX_M = 32
#: Most splits handed over in one cluster (8 CTAs: Hopper's portable cluster size).
MAX_CLUSTER = 8
#: Most programs a swept split count may launch: past two waves of 132 SMs no sweep found a win.
_SWEEP_MAX_PROGRAMS = 264


def available() -> bool:
    """Whether this Triton has Gluon's Hopper API."""
    return gluon is not None


@dataclass(frozen=True)
class GluonConfig:
    """Launch configuration of :func:`gluon_linear`. ``block_k`` and ``k_split`` fix the sum order
    over K; ``pdl`` launches with programmatic dependent launch (the weight ring then fills
    before the wait; ignored where the family has no PDL); ``cluster`` hands the split-K partials
    over in distributed shared memory where the call has 2 to ``MAX_CLUSTER`` splits (the global
    hand-off otherwise: same bits either way)."""

    block_k: int
    k_split: int
    num_stages: int
    pdl: bool = True
    cluster: bool = False

    def __post_init__(self) -> None:
        if self.block_k not in (64, 128, 256):
            raise ValueError(f"block_k: expected 64, 128 or 256, got {self.block_k}")
        if self.k_split <= 0 or self.k_split % self.block_k:
            raise ValueError(f"k_split: expected a positive multiple of block_k={self.block_k}, got {self.k_split}")
        if not 2 <= self.num_stages <= 8:
            raise ValueError(f"num_stages: expected 2..8, got {self.num_stages}")


def sweep_configs(N: int, K: int) -> list[GluonConfig]:
    """The configs ``benchmarks/bench_linear.py`` times for a shape: every ring of
    ``RING_CANDIDATES`` times each K split of :func:`kimiops.gemm.skinny.split_candidates` for
    64-row tiles and each further split count from 2 to ``MAX_CLUSTER`` that keeps the grid within
    two waves, the split ones with both hand-offs. Fewer splits than the wave-balance rule asks
    for can win here: on the H200, 2624x2048 with 2 splits (82 programs) took 4.77-5.52 us
    against 5.21-6.58 for the table's 3 (``logs_20261206_s55/r3_linear_cluster_ab.log``)."""
    n_tiles = cdiv(N, BLOCK_N)
    out = []
    for block_k, stages in RING_CANDIDATES:
        if block_k > K:
            continue
        k_splits = list(split_candidates(N, K, BLOCK_N, block_k))
        for splits in range(2, MAX_CLUSTER + 1):
            k_split = exact_k_split(K, block_k, splits)
            if k_split is not None and n_tiles * splits <= _SWEEP_MAX_PROGRAMS and k_split not in k_splits:
                k_splits.append(k_split)
        for k_split in k_splits:
            splits = cdiv(K, k_split)
            for cluster in (False, True) if 2 <= splits <= MAX_CLUSTER else (False,):
                out.append(GluonConfig(block_k=block_k, k_split=k_split, num_stages=stages, cluster=cluster))
    return out


def tma_ready(x: torch.Tensor, weight: torch.Tensor) -> bool:
    """Whether 2-D ``x`` and ``weight`` (stride 1 along K) can be read by TMA descriptors: 16-byte
    aligned base pointers and row strides, and K a multiple of 16 bytes (the range tested)."""
    size = x.element_size()
    return (x.data_ptr() % 16 == 0 and weight.data_ptr() % 16 == 0
            and (x.stride(0) * size) % 16 == 0 and (weight.stride(0) * size) % 16 == 0
            and (x.shape[1] * size) % 16 == 0)


if gluon is not None:

    @gluon.jit
    def _load_tile(desc, row, col, bar, dest, pred):
        mbarrier.expect(bar, desc.block_type.nbytes, pred=pred)
        tma.async_copy_global_to_shared(desc, [row, col], bar, dest, pred=pred)

    # Distributed shared memory through inline PTX (Triton 3.6's Gluon has no API for another CTA's
    # shared memory). ``global_smem`` is the dynamic shared array Triton declares in every kernel
    # (``.extern .shared .align 16 .b8 global_smem[]``); the hand-off uses its first BM*64*4 bytes
    # after the main loop, when the rings that live there are no longer read.
    @gluon.jit
    def _store_shared_f32(byte_off, value):
        # value -> this CTA's shared memory at global_smem + byte_off
        return gl.inline_asm_elementwise(
            "{ .reg .u32 a; mov.u32 a, global_smem; add.u32 a, a, $1; st.shared.f32 [a], $2; mov.u32 $0, 0; }",
            "=r,r,f", [byte_off, value], dtype=gl.int32, is_pure=False, pack=1)

    @gluon.jit
    def _load_shared_cluster_f32(byte_off, rank):
        # the fp32 at global_smem + byte_off in the shared memory of the cluster's CTA ``rank``
        return gl.inline_asm_elementwise(
            "{ .reg .u32 a, r; mov.u32 a, global_smem; add.u32 a, a, $1; mapa.shared::cluster.u32 r, a, $2; "
            "ld.shared::cluster.f32 $0, [r]; }",
            "=f,r,r", [byte_off, byte_off * 0 + rank], dtype=gl.float32, is_pure=False, pack=1)

    @gluon.jit
    def _cluster_sync(one_per_thread):
        # every thread of the cluster arrives (release) and waits (acquire); one element per thread
        return gl.inline_asm_elementwise(
            "barrier.cluster.arrive.release.aligned; barrier.cluster.wait.acquire.aligned; mov.u32 $0, $1;",
            "=r,r", [one_per_thread], dtype=gl.int32, is_pure=False, pack=1)

    @gluon.jit
    def _gluon_linear_kernel(w_desc, x_desc, b_ptr, y_ptr, part_ptr, count_ptr, M, N, K, K_SPLIT, stride_ym,
                             HAS_BIAS: gl.constexpr, SPLIT: gl.constexpr, BLOCK_K: gl.constexpr,
                             STAGES: gl.constexpr, CHUNK_TILES: gl.constexpr, PDL: gl.constexpr,
                             REDUCE_UNROLL: gl.constexpr, CLUSTER: gl.constexpr = 0):
        BN: gl.constexpr = w_desc.block_type.shape[0]
        BM: gl.constexpr = x_desc.block_type.shape[0]
        if CLUSTER > 0:  # the splits of one weight tile are one cluster, consecutive along x
            pid_n = gl.program_id(0) // CLUSTER
            pid_k = gl.program_id(0) % CLUSTER
        else:
            pid_n = gl.program_id(0)
            pid_k = gl.program_id(1)
        n0 = pid_n * BN
        k_lo = pid_k * K_SPLIT
        k_tiles = gl.cdiv(gl.minimum(K_SPLIT, K - k_lo), BLOCK_K)

        w_ring = gl.allocate_shared_memory(w_desc.dtype, [STAGES, BN, BLOCK_K], w_desc.layout)
        x_ring = gl.allocate_shared_memory(x_desc.dtype, [STAGES, BM, BLOCK_K], x_desc.layout)
        w_ready = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
        x_ready = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
        for j in gl.static_range(STAGES):
            mbarrier.init(w_ready.index(j), count=1)
            mbarrier.init(x_ready.index(j), count=1)
        fence_async_shared()

        if PDL:
            gdc_launch_dependents()
        # The weight ring fills before the wait (the module's contract), x's tiles after it.
        for j in gl.static_range(STAGES):
            _load_tile(w_desc, n0, k_lo + j * BLOCK_K, w_ready.index(j), w_ring.index(j), j < k_tiles)
        if PDL:
            gdc_wait()
        for j in gl.static_range(STAGES):
            _load_tile(x_desc, 0, k_lo + j * BLOCK_K, x_ready.index(j), x_ring.index(j), j < k_tiles)

        acc_layout: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[4, 1],
                                                             instr_shape=[16, BM, 16])
        acc = gl.zeros([BN, BM], gl.float32, acc_layout)
        total = gl.zeros([BN, BM], gl.float32, acc_layout)
        for i in range(k_tiles):
            s = i % STAGES
            phase = (i // STAGES) & 1
            mbarrier.wait(w_ready.index(s), phase)
            mbarrier.wait(x_ready.index(s), phase)
            acc = warpgroup_mma(w_ring.index(s), x_ring.index(s).permute((1, 0)), acc, is_async=True)
            acc, _, _ = warpgroup_mma_wait(num_outstanding=0, deps=[acc, w_ring.index(s), x_ring.index(s)])
            refill = i + STAGES < k_tiles
            _load_tile(w_desc, n0, k_lo + (i + STAGES) * BLOCK_K, w_ready.index(s), w_ring.index(s), refill)
            _load_tile(x_desc, 0, k_lo + (i + STAGES) * BLOCK_K, x_ready.index(s), x_ring.index(s), refill)
            if i % CHUNK_TILES == CHUNK_TILES - 1:  # fixed K offsets within the split
                total = total + acc
                acc = gl.zeros([BN, BM], gl.float32, acc_layout)
        total = total + acc
        for j in gl.static_range(STAGES):
            mbarrier.invalidate(w_ready.index(j))
            mbarrier.invalidate(x_ready.index(j))

        # Stores and the reduction in a layout whose lanes run along N, y's contiguous axis (the
        # accumulator's lanes run along M: each 4-byte store would be its own memory segment;
        # storing from it made M = 16 take 4.82 vs 4.24 us on 1024x2048, r2 vs r3 sweep logs).
        out_layout: gl.constexpr = gl.BlockedLayout(size_per_thread=[2, 1], threads_per_warp=[32, 1],
                                                    warps_per_cta=[1, 4], order=[0, 1])
        total = gl.convert_layout(total, out_layout)
        offs_n = n0 + gl.arange(0, BN, layout=gl.SliceLayout(1, out_layout))
        offs_m = gl.arange(0, BM, layout=gl.SliceLayout(0, out_layout))
        mask = (offs_n < N)[:, None] & (offs_m < M)[None, :]
        y_ptrs = y_ptr + offs_m[None, :] * stride_ym + offs_n[:, None]
        if CLUSTER > 0:
            # Split-K hand-off in distributed shared memory: each CTA puts its partial at the start
            # of its own shared memory (the rings are done with), the cluster syncs, rank 0 sums
            # the CTAs' partials in rank order 0..CLUSTER-1 (the order of the global path, so the
            # same bits) and stores y, and the cluster syncs again so no CTA exits while read.
            # column-major [BM, BN]: the lanes' consecutive rows n hit consecutive banks
            byte_off = (offs_m[None, :] * BN + (offs_n - n0)[:, None]) * 4
            gl.static_assert(STAGES * BLOCK_K * 2 >= BM * 4, "the partial must fit in the weight ring's bytes")
            gl.thread_barrier()  # the ring reads and the layout conversion's scratch are finished
            _store_shared_f32(byte_off, total)
            one_per_thread: gl.constexpr = gl.BlockedLayout([1], [32], [4], [0])  # 4 warps, as launched
            _cluster_sync(gl.arange(0, 128, layout=one_per_thread))
            if pid_k == 0:
                total = gl.zeros([BN, BM], gl.float32, out_layout)
                for r in gl.static_range(CLUSTER):
                    total += _load_shared_cluster_f32(byte_off, r)
                if HAS_BIAS:
                    total = total + gl.load(b_ptr + offs_n, mask=offs_n < N, other=0.0).to(gl.float32)[:, None]
                gl.store(y_ptrs, total.to(y_ptr.dtype.element_ty), mask=mask)
            _cluster_sync(gl.arange(0, 128, layout=one_per_thread))
        elif SPLIT:
            tile_elems = gl.to_tensor(M).to(gl.int64) * N
            part_tile = part_ptr + offs_m.to(gl.int64)[None, :] * N + offs_n[:, None]
            gl.store(part_tile + pid_k * tile_elems, total, mask=mask)
            gl.thread_barrier()  # every thread's partial is stored before the arrival (release)
            splits = gl.num_programs(1)
            arrived = gl.atomic_add(count_ptr + pid_n, 1, sem="acq_rel", scope="gpu")
            if arrived == splits - 1:
                total = gl.zeros([BN, BM], gl.float32, out_layout)
                for s0 in range(0, splits, REDUCE_UNROLL):
                    for r in gl.static_range(REDUCE_UNROLL):
                        # .cg: the other programs' partials from L2, never from a stale L1 line
                        total += gl.load(part_tile + (s0 + r) * tile_elems, mask=mask & (s0 + r < splits),
                                         other=0.0, cache_modifier=".cg")
                if HAS_BIAS:
                    total = total + gl.load(b_ptr + offs_n, mask=offs_n < N, other=0.0).to(gl.float32)[:, None]
                gl.store(y_ptrs, total.to(y_ptr.dtype.element_ty), mask=mask)
                gl.store(count_ptr + pid_n, 0)
        else:
            if HAS_BIAS:
                total = total + gl.load(b_ptr + offs_n, mask=offs_n < N, other=0.0).to(gl.float32)[:, None]
            gl.store(y_ptrs, total.to(y_ptr.dtype.element_ty), mask=mask)


def _cluster_launch(args: tuple, const: dict, pdl: bool, n_tiles: int, splits: int) -> bool:
    """Launch ``n_tiles`` clusters of ``splits`` CTAs (grid ``n_tiles * splits`` along x); False,
    launching nothing, where this Triton's launcher cannot take the cluster size.

    Triton's JIT binds and specializes the arguments and compiles (``warmup=True``: no launch);
    its launcher then gets the metadata tuple ``(num_warps, num_ctas, shared)`` with ``num_ctas =
    splits``, which Triton 3.6's launcher turns into the launch's cluster dimension and a grid of
    ``gridX * num_ctas`` CTAs. Launch hooks (profilers) are not called for this launch."""
    ck = _gluon_linear_kernel.run(*args, grid=(n_tiles * splits,), warmup=True, num_warps=4, **const,
                                  **({"launch_pdl": True} if pdl else {}))
    if ck is None:  # a ``jit_cache_hook`` declined the compile: the JIT path decides what happens
        return False
    if hasattr(ck, "result"):  # a compile started in the background (``kimiops.launch.compiling_in_background``)
        ck = ck.result()
    meta = ck.metadata
    if len(ck.packed_metadata) != 3 or meta.global_scratch_size or getattr(meta, "profile_scratch_size", 0):
        return False  # another launcher layout, or scratch sized for one CTA per program
    stream = torch.cuda.current_stream().cuda_stream
    ck.run(n_tiles, 1, 1, stream, ck.function, (meta.num_warps, splits, meta.shared), None, None, None, *args,
           *const.values())
    return True


def _gl_dtype(dtype: torch.dtype):
    return gl.bfloat16 if dtype == torch.bfloat16 else gl.float16


def gluon_linear(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, out: torch.Tensor,
                 config: GluonConfig) -> torch.Tensor:
    """Launch the kernel: ``out[M, N] = x[M, K] @ weight[N, K]^T (+ bias[N])``; returns ``out``.

    Expects checked inputs (see :func:`kimiops.gemm.linear.linear`) that also pass
    :func:`tma_ready`, ``0 < M <= MAX_M``, bf16 or fp16, ``out`` contiguous ``[M, N]`` in x's
    dtype or fp32, on a Hopper GPU. ``KIMIOPS_PDL=0`` launches without programmatic dependent launch
    (the weight is then read in stream order). The TMA descriptors are built per call on the host: the kernel
    is meant for CUDA graphs (``auto`` runs it only inside a capture).
    """
    M, K = x.shape
    N = weight.shape[0]
    if not 0 < M <= MAX_M:
        raise ValueError(f"x: expected 1..{MAX_M} rows for the Gluon kernel, got {M}")
    block_m = 16 if M <= 16 else 32
    splits = cdiv(K, config.k_split)
    n_tiles = cdiv(N, BLOCK_N)
    dt = _gl_dtype(x.dtype)
    w_desc = TensorDescriptor.from_tensor(weight, [BLOCK_N, config.block_k],
                                          gl.NVMMASharedLayout.get_default_for([BLOCK_N, config.block_k], dt))
    x_desc = TensorDescriptor.from_tensor(x, [block_m, config.block_k],
                                          gl.NVMMASharedLayout.get_default_for([block_m, config.block_k], dt))
    pdl = config.pdl and supports_pdl(x.device) and env_var("KIMIOPS_PDL") != "0"
    b_arg = bias if bias is not None else out
    if config.cluster and 2 <= splits <= MAX_CLUSTER:
        const = dict(HAS_BIAS=bias is not None, SPLIT=True, BLOCK_K=config.block_k, STAGES=config.num_stages,
                     CHUNK_TILES=max(1, CHUNK_K // config.block_k), PDL=pdl, REDUCE_UNROLL=1, CLUSTER=splits)
        with on_device(x.device):  # part_ptr and count_ptr are not read in a cluster
            if _cluster_launch((w_desc, x_desc, b_arg, out, out, out, M, N, K, config.k_split, out.stride(0)),
                               const, pdl, n_tiles, splits):
                return out
    if splits > 1:
        partials, counters = split_k_scratch(x.device, splits * M * N, n_tiles)
    else:
        partials = counters = out  # never read: SPLIT is off
    with on_device(x.device):
        _gluon_linear_kernel[(n_tiles, splits)](
            w_desc, x_desc, b_arg, out, partials, counters, M, N, K, config.k_split,
            out.stride(0), HAS_BIAS=bias is not None, SPLIT=splits > 1, BLOCK_K=config.block_k,
            STAGES=config.num_stages, CHUNK_TILES=max(1, CHUNK_K // config.block_k), PDL=pdl,
            REDUCE_UNROLL=min(8, next_power_of_2(splits)), num_warps=4, **({"launch_pdl": True} if pdl else {}))
    return out
