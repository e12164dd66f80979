"""Experimental (branch ``exp/linear-gluon-early``): a Gluon small-M linear for Hopper whose weight
stream starts before the programmatic-dependent-launch wait.

Why: ``benchmarks/tools/linear_read_floor.py`` measured on the H200 that a weight read whose loads
wait for the previous kernel is bound at 3.28 us + bytes / 4.20 TB/s (1.34x cuBLAS, geomean over
the issue's cells), and at 1.35 us + bytes / 4.16 TB/s (1.73x) when its loads run before the wait.
The Triton kernel (``skinny.py``) cannot issue weight loads into its shared-memory pipeline before
the wait without issuing x's loads there too: Triton's pipeliner puts every load of an iteration
into the same prologue stage. Here the pipeline is explicit: the first ``STAGES`` weight tiles go
out by TMA before the wait, x's tiles after it, each with its own mbarrier.

What it computes: ``y[M, N] = x[M, K] @ W[N, K]^T (+ bias)`` for ``M <= 16``, as ``y^T = W x^T``
per program: ``BLOCK_N = 64`` weight rows (the wgmma's M side) times the 16 token rows (its N
side), over all of K (no split-K in this prototype).

Grid: ``cdiv(N, 64)`` programs, one warpgroup each.

Pipeline: a ring of ``STAGES`` weight tiles ``[64, BLOCK_K]`` and x tiles ``[16, BLOCK_K]`` in
shared memory, filled by TMA, each slot with an mbarrier per operand. Before ``griddepcontrol.wait``:
the weight tiles of slots ``0..STAGES-1``. After it: x's tiles, then per K tile: wait for both,
``wgmma`` (A = weight tile, B = the x tile transposed in place), wait for it, refill the slot with
the tile ``STAGES`` ahead. Rows of x past M and columns past K read as zeros (TMA bounds).

Numerics: fp32 accumulation in chunks of ``CHUNK_K`` (1024) elements, added into a running total
at fixed K offsets, as ``skinny.py`` does; one rounding to the output dtype; bias in fp32.

Contract this needs (the reason it is not on main): the weight must not be written by a kernel that
may still be running when this one starts, i.e. by a kernel launched before it on the stream with
programmatic dependent launch that has not finished. Model weights in a decode step satisfy it.
"""

from __future__ import annotations

import torch
import triton
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import fence_async_shared, mbarrier, tma, warpgroup_mma, \
    warpgroup_mma_wait
from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

from kimiops.gemm.scratch import split_k_scratch
from kimiops.intmath import cdiv, next_power_of_2

BLOCK_N = 64
CHUNK_K = 1024


@gluon.jit
def _gdc_launch_dependents():
    gl.inline_asm_elementwise("griddepcontrol.launch_dependents; // $0", "=r", [], dtype=gl.int32, is_pure=False,
                              pack=1)


@gluon.jit
def _gdc_wait():
    gl.inline_asm_elementwise("griddepcontrol.wait; // $0", "=r", [], dtype=gl.int32, is_pure=False, pack=1)


@gluon.jit
def _skinny_gluon_kernel(w_desc, x_desc, b_ptr, y_ptr, part_ptr, count_ptr, M, N, K, K_SPLIT, stride_ym,
                         HAS_BIAS: gl.constexpr, SPLIT: gl.constexpr, BLOCK_K: gl.constexpr, STAGES: gl.constexpr,
                         EARLY: gl.constexpr, CHUNK_TILES: gl.constexpr, PDL: gl.constexpr, X_EARLY: gl.constexpr,
                         REDUCE_UNROLL: gl.constexpr):
    BN: gl.constexpr = w_desc.block_type.shape[0]
    BM: gl.constexpr = x_desc.block_type.shape[0]
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
        _gdc_launch_dependents()
    # the weight's first EARLY tiles: before the wait (see the module's contract)
    for j in gl.static_range(EARLY):
        mbarrier.expect(w_ready.index(j), w_desc.block_type.nbytes, pred=j < k_tiles)
        tma.async_copy_global_to_shared(w_desc, [n0, k_lo + j * BLOCK_K], w_ready.index(j), w_ring.index(j),
                                        pred=j < k_tiles)
    if X_EARLY:  # diagnostic only: ignores the dependency on the previous kernel's x
        for j in gl.static_range(STAGES):
            mbarrier.expect(x_ready.index(j), x_desc.block_type.nbytes, pred=j < k_tiles)
            tma.async_copy_global_to_shared(x_desc, [0, k_lo + j * BLOCK_K], x_ready.index(j), x_ring.index(j),
                                            pred=j < k_tiles)
    if PDL:
        _gdc_wait()
    if not X_EARLY:
        for j in gl.static_range(STAGES):
            mbarrier.expect(x_ready.index(j), x_desc.block_type.nbytes, pred=j < k_tiles)
            tma.async_copy_global_to_shared(x_desc, [0, k_lo + j * BLOCK_K], x_ready.index(j), x_ring.index(j),
                                            pred=j < k_tiles)
    for j in gl.static_range(EARLY, STAGES):
        mbarrier.expect(w_ready.index(j), w_desc.block_type.nbytes, pred=j < k_tiles)
        tma.async_copy_global_to_shared(w_desc, [n0, k_lo + j * BLOCK_K], w_ready.index(j), w_ring.index(j),
                                        pred=j < k_tiles)

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
        nxt = i + STAGES
        refill = nxt < k_tiles
        mbarrier.expect(w_ready.index(s), w_desc.block_type.nbytes, pred=refill)
        tma.async_copy_global_to_shared(w_desc, [n0, k_lo + nxt * BLOCK_K], w_ready.index(s), w_ring.index(s),
                                        pred=refill)
        mbarrier.expect(x_ready.index(s), x_desc.block_type.nbytes, pred=refill)
        tma.async_copy_global_to_shared(x_desc, [0, k_lo + nxt * BLOCK_K], x_ready.index(s), x_ring.index(s),
                                        pred=refill)
        if i % CHUNK_TILES == CHUNK_TILES - 1:  # fixed K offsets within the split
            total = total + acc
            acc = gl.zeros([BN, BM], gl.float32, acc_layout)
    total = total + acc
    for j in gl.static_range(STAGES):
        mbarrier.invalidate(w_ready.index(j))
        mbarrier.invalidate(x_ready.index(j))

    # Stores and the split-K reduction in a layout whose lanes run along N, y's contiguous axis (the
    # wgmma accumulator's lanes run along M, which would make every 4-byte store its own segment).
    out_layout: gl.constexpr = gl.BlockedLayout(size_per_thread=[2, 1], threads_per_warp=[32, 1],
                                                warps_per_cta=[1, 4], order=[0, 1])
    total = gl.convert_layout(total, out_layout)
    offs_n = n0 + gl.arange(0, BN, layout=gl.SliceLayout(1, out_layout))
    offs_m = gl.arange(0, BM, layout=gl.SliceLayout(0, out_layout))
    mask = (offs_n < N)[:, None] & (offs_m < M)[None, :]
    y_ptrs = y_ptr + offs_m[None, :] * stride_ym + offs_n[:, None]
    if SPLIT:
        # Deterministic split-K, as skinny.py: fp32 partials [splits, M, N], an int32 arrival counter
        # per weight tile; the last split to arrive sums the partials in the order 0, 1, ..., splits-1.
        tile_elems = gl.to_tensor(M).to(gl.int64) * N
        part_tile = part_ptr + offs_m.to(gl.int64)[None, :] * N + offs_n[:, None]
        gl.store(part_tile + pid_k * tile_elems, total, mask=mask)
        gl.thread_barrier()
        splits = gl.num_programs(1)
        arrived = gl.atomic_add(count_ptr + pid_n, 1, sem="acq_rel", scope="gpu")
        if arrived == splits - 1:
            total = gl.zeros([BN, BM], gl.float32, out_layout)
            for s0 in range(0, splits, REDUCE_UNROLL):
                for r in gl.static_range(REDUCE_UNROLL):
                    total += gl.load(part_tile + (s0 + r) * tile_elems, mask=mask & (s0 + r < splits), other=0.0,
                                     cache_modifier=".cg")
            if HAS_BIAS:
                total = total + gl.load(b_ptr + offs_n, mask=offs_n < N, other=0.0).to(gl.float32)[:, None]
            gl.store(y_ptrs, total.to(y_ptr.dtype.element_ty), mask=mask)
            gl.store(count_ptr + pid_n, 0)
    else:
        if HAS_BIAS:
            total = total + gl.load(b_ptr + offs_n, mask=offs_n < N, other=0.0).to(gl.float32)[:, None]
        gl.store(y_ptrs, total.to(y_ptr.dtype.element_ty), mask=mask)


def weight_layout(block_k: int):
    return gl.NVMMASharedLayout.get_default_for([BLOCK_N, block_k], gl.bfloat16)


def x_layout(block_m: int, block_k: int):
    return gl.NVMMASharedLayout.get_default_for([block_m, block_k], gl.bfloat16)


def skinny_gluon_linear(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None, out: torch.Tensor, *,
                        block_k: int = 128, stages: int = 4, early: int | None = None, k_split: int | None = None,
                        pdl: bool = True, x_early: bool = False) -> torch.Tensor:
    """``out[M, N] = x[M, K] @ weight[N, K]^T (+ bias)`` for bf16 ``x``/``weight``, ``M <= 32``,
    contiguous 2-D ``x``, ``weight`` and ``out`` (bf16 or fp32), K a multiple of 8 (TMA strides).
    ``early`` weight tiles (default: all ``stages``) are requested before the PDL wait; ``k_split``
    (a multiple of ``block_k``, default K) cuts K across programs. ``x_early`` is a diagnostic that
    ignores the dependency on the previous kernel. Experimental: no input checks beyond asserts."""
    M, K = x.shape
    N = weight.shape[0]
    block_m = 16 if M <= 16 else 32
    assert 0 < M <= 32 and x.dtype == weight.dtype == torch.bfloat16 and K % 8 == 0
    assert x.is_contiguous() and weight.is_contiguous() and out.is_contiguous()
    k_split = K if k_split is None else k_split
    assert k_split % block_k == 0 or k_split >= K
    k_split = cdiv(min(k_split, K), block_k) * block_k
    splits = cdiv(K, k_split)
    n_tiles = cdiv(N, BLOCK_N)
    early = stages if early is None else early
    if splits > 1:
        partials, counters = split_k_scratch(x.device, splits * M * N, n_tiles)
    else:
        partials = counters = out
    w_desc = TensorDescriptor.from_tensor(weight, [BLOCK_N, block_k], weight_layout(block_k))
    x_desc = TensorDescriptor.from_tensor(x, [block_m, block_k], x_layout(block_m, block_k))
    _skinny_gluon_kernel[(n_tiles, splits)](
        w_desc, x_desc, bias if bias is not None else out, out, partials, counters, M, N, K, k_split, out.stride(0),
        HAS_BIAS=bias is not None, SPLIT=splits > 1, BLOCK_K=block_k, STAGES=stages, EARLY=early,
        CHUNK_TILES=max(1, CHUNK_K // block_k), PDL=pdl, X_EARLY=x_early,
        REDUCE_UNROLL=min(8, next_power_of_2(splits)),
        num_warps=4, **({"launch_pdl": True} if pdl else {}))
    return out
