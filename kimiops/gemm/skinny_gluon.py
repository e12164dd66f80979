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
    ``(cdiv(N, 64), splits)``, ``splits = cdiv(K, k_split)``; one warpgroup per program.

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

Requirements (``tma_ready``): x and weight 16-byte aligned with row strides that are multiples of
16 bytes (TMA). ``kimiops.gemm.linear`` runs cuBLAS for calls that do not meet them.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from kimiops.arch import supports_pdl
from kimiops.env import env_var
from kimiops.gemm.scratch import split_k_scratch
from kimiops.gemm.skinny import CHUNK_K  # one accumulation chunk for both linear kernels
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


def available() -> bool:
    """Whether this Triton has Gluon's Hopper API."""
    return gluon is not None


@dataclass(frozen=True)
class GluonConfig:
    """Launch configuration of :func:`gluon_linear`. ``block_k`` and ``k_split`` fix the sum order
    over K; ``pdl`` launches with programmatic dependent launch (the weight ring then fills
    before the wait; ignored where the family has no PDL)."""

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

    @gluon.jit
    def _store_shared_f32(byte_off, value):
        # value -> this CTA's shared memory at global_smem + byte_off (Triton's dynamic shared array)
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
            gl.thread_barrier()  # the ring reads and the layout conversion's scratch are finished
            _store_shared_f32(byte_off, total)
            one_per_thread: gl.constexpr = gl.BlockedLayout([1], [32], [4], [0])
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


#: Cluster sizes of the split-K hand-off in distributed shared memory: up to 8 CTAs is portable
#: on Hopper; Triton's launcher also allows 16 (non-portable).
CLUSTER_SIZES = (2, 3, 4, 5, 6, 7, 8, 16)
_CLUSTER_KERNELS: dict = {}


def _cluster_launch(args, const, pdl, n_tiles, splits, device):
    """Launch ``n_tiles`` clusters of ``splits`` CTAs. The kernel is compiled for one CTA per
    program (Gluon's own multi-CTA mode would need CGA layouts on every tensor); Triton's
    launcher puts the cluster dimension from the metadata tuple's ``num_ctas`` into the launch,
    so the grid is ``n_tiles * splits`` CTAs along x in clusters of ``splits``."""
    key = (args[0].base.dtype, args[3].dtype, tuple(args[0].block_shape), tuple(args[1].block_shape),
           tuple(const.items()), device)
    ck = _CLUSTER_KERNELS.get(key)
    if ck is None:
        ck = _gluon_linear_kernel.run(*args, grid=(n_tiles * splits,), warmup=True, num_warps=4, **const,
                                      **({"launch_pdl": True} if pdl else {}))
        _CLUSTER_KERNELS[key] = ck
    launcher = ck.run
    stream = torch.cuda.current_stream(device).cuda_stream
    launcher(n_tiles, 1, 1, stream, ck.function, (ck.metadata.num_warps, splits, ck.metadata.shared), None, None,
             None, *args, *const.values())


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
    if splits > 1:
        partials, counters = split_k_scratch(x.device, splits * M * N, n_tiles)
    else:
        partials = counters = out  # never read: SPLIT is off
    dt = _gl_dtype(x.dtype)
    w_desc = TensorDescriptor.from_tensor(weight, [BLOCK_N, config.block_k],
                                          gl.NVMMASharedLayout.get_default_for([BLOCK_N, config.block_k], dt))
    x_desc = TensorDescriptor.from_tensor(x, [block_m, config.block_k],
                                          gl.NVMMASharedLayout.get_default_for([block_m, config.block_k], dt))
    pdl = config.pdl and supports_pdl(x.device) and env_var("KIMIOPS_PDL") != "0"
    if config.cluster and splits in CLUSTER_SIZES:
        args = (w_desc, x_desc, bias if bias is not None else out, out, out, out, M, N, K, config.k_split,
                out.stride(0))
        const = dict(HAS_BIAS=bias is not None, SPLIT=True, BLOCK_K=config.block_k, STAGES=config.num_stages,
                     CHUNK_TILES=max(1, CHUNK_K // config.block_k), PDL=pdl, REDUCE_UNROLL=1, CLUSTER=splits)
        with on_device(x.device):
            _cluster_launch(args, const, pdl, n_tiles, splits, x.device)
        return out
    with on_device(x.device):
        _gluon_linear_kernel[(n_tiles, splits)](
            w_desc, x_desc, bias if bias is not None else out, out, partials, counters, M, N, K, config.k_split,
            out.stride(0), HAS_BIAS=bias is not None, SPLIT=splits > 1, BLOCK_K=config.block_k,
            STAGES=config.num_stages, CHUNK_TILES=max(1, CHUNK_K // config.block_k), PDL=pdl,
            REDUCE_UNROLL=min(8, next_power_of_2(splits)), num_warps=4, **({"launch_pdl": True} if pdl else {}))
    return out
