"""Triton small-M linear for weight streaming: ``y[M, N] = x[M, K] @ W[N, K]^T (+ bias)``.

What it computes
    Each program owns ``BLOCK_N`` rows of ``W`` (output columns) and ``BLOCK_M`` token rows, and
    computes the transposed tile ``y^T = W x^T`` with ``tl.dot(w[BLOCK_N, BLOCK_K],
    x^T[BLOCK_K, BLOCK_M])``: the weight rows fill the MMA's wide dimension (64 or 128 on Hopper
    wgmma) and the handful of tokens sit on its narrow side, padded to 16 (``BLOCK_M``). The
    weight is read once from HBM (``evict_first``: it will not be reused); ``x`` is tiny and
    stays in L2 for every program.

Grid
    ``(cdiv(N, BLOCK_N), splits, cdiv(M, BLOCK_M))``. ``splits = cdiv(K, k_split)`` cuts K into
    chunks of ``k_split`` (a multiple of ``BLOCK_K``) so that programs fill the GPU when
    ``N / BLOCK_N`` alone cannot (132 SMs on the H200). The candidates come from
    :func:`split_candidates`: no split when there are enough weight tiles, otherwise the fewest
    splits whose program count is wave balanced (mean/max programs per SM >= 0.9: 192 programs
    on 132 SMs leave 60 SMs doing twice the work of the rest). The K loop of each program is
    software pipelined ``num_stages`` deep so several weight tiles are in flight per SM.

Stream-K grid (``SkinnyConfig.programs = P > 0``)
    Why: on the H200 each active SM streams at most ~33-35 GB/s, so the classic grid's best
    configs for N = 6144 / 7168 (96 / 112 programs of one weight-tile column each, no K split)
    leave 36 / 20 of the 132 SMs idle and reach 62-75% of copy bandwidth; K splits that do fill
    the SMs lose because every extra program on an SM pays a new pipeline fill. Stream-K gives
    every SM one program and the same amount of work: the work units ``u = n_tile * KT + k_tile``
    (``KT = cdiv(K, BLOCK_K)``, ``U = cdiv(N, BLOCK_N) * KT`` units) are cut into ``P``
    contiguous ranges, program ``p`` owning ``[p*U//P, (p+1)*U//P)`` (with ``P = min(P, U)``;
    programs beyond own nothing). Grid ``(P, cdiv(M, BLOCK_M))``. Each program runs ONE flat
    loop over its units, software pipelined ``num_stages`` deep, so its weight loads stay in
    flight across tile boundaries; the accumulator restarts at each tile start. A tile wholly
    inside a range is written directly (+ bias). Only the first (head) and last (tail) tile of
    a range can be shared with other programs; the head's piece is kept in registers and both
    are handed off after the loop (Triton does not pipeline a loop that contains another loop
    or the hand-off's barrier), through the same deterministic workspace reduction as split-K
    below with workspace ``[pieces, M, N]``: piece ``j`` of a tile (its ``j``-th program in K
    order, ``j = p - owner(first unit of the tile)``) at slot ``j``, ``pieces`` =
    :func:`streamk_max_pieces`, and an int32 arrival counter per (tile, token tile). When no
    tile is shared (``pieces == 1``) the hand-off is compiled out. Whether it beats the classic
    grid is measured per shape by ``benchmarks/bench_linear.py``.

Numerics
    fp32 accumulation (``tl.dot`` with the accumulator chained through every ``BLOCK_K`` step),
    bias added in fp32 in the epilogue, one rounding to the output dtype (bf16/fp16 or fp32).
    Split-K is deterministic: every split stores its fp32 partial tile to a workspace
    ``[splits, M, N]``; an int32 arrival counter per output tile (integer atomic, acq_rel) finds
    the last split to finish, and that program sums the partials in the fixed order
    ``0, 1, ..., splits-1``, applies bias, writes ``y`` and resets the counter to 0 for the next
    call. No floating-point atomics. The partial loads are unrolled ``REDUCE_UNROLL`` (<= 8)
    at a time so a group costs one L2 round trip; the first version loaded them one after
    another, which made the hand-off cost ``splits`` dependent round trips (the 5.2 us floor
    of the 4 MB shapes in ``benchmarks/results/linear_sm90_round1.json``).
    Both grids accumulate in chunks of :data:`CHUNK_K` elements that end at fixed K offsets
    (relative to the split start; absolute under stream-K), so no fp32 chain grows with K.
    Under stream-K the sum of an element is: per piece, its chunks in order; then the pieces in
    K order. With no tile shared, that is exactly the classic order without a K split.

Batch invariance
    The K decomposition (``block_k``, ``k_split``, or stream-K ``programs``: the pieces are a
    function of ``(N, K, BLOCK_N, BLOCK_K, P)``, never of M) and ``block_n`` (which also picks
    the MMA instruction: ``mma.sync`` below 64 rows, ``wgmma`` from 64 on Hopper) are chosen from
    ``(N, K)`` only (see :mod:`kimiops.gemm.dispatch`), and the per-element sum order does not
    depend on which other rows share the tile, so row ``m`` of ``y`` gets the same bits whatever
    ``M`` is and whatever rows are batched with it. ``block_m``, ``num_warps`` and
    ``num_stages`` may vary with M: they change which program computes an element, not its sum
    order.

Tuning (H200, bf16, CUDA-graph replay over rotating weights, cold L2)
    ``benchmarks/bench_linear.py`` sweeps, per (N, K), ``block_n`` in
    :data:`BLOCK_N_CANDIDATES` (+ :data:`SMALL_N_BLOCK_N` for N <= 2624) times the K splits of
    :func:`split_candidates`, plus stream-K with one program per SM for each height, and per M
    the :data:`TILE_CANDIDATES` (num_warps, num_stages);
    it writes the winners into ``kimiops/gemm/tables/sm90.json`` with the measured times and
    speedups next to each entry, and every candidate's best time per M into
    ``benchmarks/results/linear_sm90.json`` (``candidates``). :func:`default_config` is what
    runs when ``backend="triton"`` is forced on a shape the table does not list.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import torch
import triton
import triton.language as tl

from kimiops.arch import supports_pdl
from kimiops.gemm.scratch import split_k_scratch

#: Reference tile height used to turn a program target into a K split (independent of M).
SPLIT_REFERENCE_BLOCK_N = 64
DEFAULT_TARGET_PROGRAMS = 264
#: SMs the wave-balance heuristic of :func:`split_candidates` plans for (H200).
NUM_SMS = 132
#: Weight-tile heights swept per shape (shape-level: fixes the MMA family and so the K order).
BLOCK_N_CANDIDATES = (32, 64, 128)
#: Extra tile height for small N (swept in round 2, never chosen: 0 = off).
SMALL_N_BLOCK_N = 0
#: Per-M tiles swept by the benchmark: (num_warps, num_stages), stages clamped to shared memory.
TILE_CANDIDATES = ((4, 6), (8, 4))
#: PDL settings swept per M (the benchmark chains calls of the kernel, which PDL overlaps).
PDL_CANDIDATES = (False, True)
#: Shared memory the pipelined weight + token tiles of one program may take (H200: 227 KiB/SM).
SMEM_BUDGET = 200 * 1024
#: Longest fp32 accumulation chain (K elements) before the running chunk is added to the total.
CHUNK_K = 1024
#: Weight elements per row prefetched into L2 before waiting on the previous kernel (PDL).
PREFETCH_K = 512


def fit_stages(block_n: int, block_m: int, block_k: int, num_stages: int) -> int:
    """``num_stages`` clamped so the staged weight and token tiles fit :data:`SMEM_BUDGET`."""
    stage_bytes = (block_n + block_m) * block_k * 2
    return max(2, min(num_stages, SMEM_BUDGET // stage_bytes))


def default_stages(block_n: int, block_m: int, block_k: int) -> int:
    return fit_stages(block_n, block_m, block_k, 4)


def wave_efficiency(programs: int, num_sms: int = NUM_SMS) -> float:
    """Mean over max programs per SM when ``programs`` equal programs spread over the SMs: the
    fraction of the busiest SMs' time that the others are busy too."""
    return (programs / num_sms) / triton.cdiv(programs, num_sms)


def split_candidates(N: int, K: int, block_n: int, block_k: int, limit: int = 3) -> list[int]:
    """K splits (``k_split`` values, in K elements) worth measuring for a tile height.

    No split when there are at least ``0.45 * NUM_SMS`` weight tiles (fewer, fuller SMs but no
    split-K hand-off); then the fewest splits whose
    program count fills the SMs to >= 90% (wave balance), and the next such. A function of
    ``(N, K, block_n, block_k)`` only.
    """
    n_tiles = triton.cdiv(N, block_n)
    k_tiles = max(1, triton.cdiv(K, block_k))
    out = []
    if n_tiles >= 0.45 * NUM_SMS:
        out.append(k_tiles * block_k)
    for splits in range(2, min(k_tiles, 32) + 1):
        ks = triton.cdiv(k_tiles, splits)
        real = triton.cdiv(k_tiles, ks)
        programs = n_tiles * real
        if programs >= 0.9 * NUM_SMS and wave_efficiency(programs) >= 0.9 and ks * block_k not in out:
            out.append(ks * block_k)
        if len(out) >= limit:
            break
    return out


@dataclass(frozen=True)
class SkinnyConfig:
    """Launch configuration of :func:`skinny_linear`.

    ``block_n``, ``block_k``, ``k_split`` and ``programs`` fix the reduction order over K and
    must depend on ``(N, K)`` only; the other fields may depend on M. ``programs = 0`` runs the
    classic grid (K split every ``k_split`` elements); ``programs > 0`` runs the stream-K kernel
    with that many persistent programs (``k_split`` is then unused).
    """

    block_n: int
    block_m: int
    block_k: int
    k_split: int
    num_warps: int = 4
    num_stages: int = 4
    pdl: bool = False  # programmatic dependent launch + L2 prefetch (sm90+; ignored elsewhere)
    programs: int = 0  # 0: classic grid; > 0: stream-K with this many persistent programs

    def __post_init__(self) -> None:
        for name in ("block_n", "block_m", "block_k"):
            value = getattr(self, name)
            if value < 16 or value & (value - 1):
                raise ValueError(f"{name}: expected a power of two >= 16, got {value}")
        if self.k_split <= 0 or self.k_split % self.block_k:
            raise ValueError(f"k_split: expected a positive multiple of block_k={self.block_k}, got {self.k_split}")
        if self.num_warps not in (1, 2, 4, 8, 16):
            raise ValueError(f"num_warps: expected 1, 2, 4, 8 or 16, got {self.num_warps}")
        if self.num_stages < 1:
            raise ValueError(f"num_stages: expected >= 1, got {self.num_stages}")
        if not isinstance(self.programs, int) or isinstance(self.programs, bool) or not 0 <= self.programs < 2**31:
            raise ValueError(f"programs: expected an int >= 0 (0: classic grid, > 0: stream-K programs, e.g. the "
                             f"SM count), got {self.programs!r}")


def block_k_for(K: int) -> int:
    """K tile: 128, or the next power of two >= 16 for smaller K."""
    return 128 if K >= 128 else max(16, triton.next_power_of_2(K))


def k_split_for(N: int, K: int, block_k: int, target_programs: int) -> int:
    """K elements per split so that ``cdiv(N, 64) * splits`` reaches ``target_programs``.

    A function of ``(N, K)`` and the target only: never of M.
    """
    n_tiles = triton.cdiv(N, SPLIT_REFERENCE_BLOCK_N)
    k_tiles = max(1, triton.cdiv(K, block_k))
    splits = min(k_tiles, max(1, triton.cdiv(target_programs, n_tiles)))
    return triton.cdiv(k_tiles, splits) * block_k


def block_m_for(M: int) -> int:
    """Token tile: 16 up to M = 16, then 32, then 64 (larger M loops over M tiles)."""
    return 16 if M <= 16 else 32 if M <= 32 else 64


def default_config(N: int, K: int, M: int) -> SkinnyConfig:
    """Configuration used when no measured table entry exists for ``(N, K, M)``."""
    block_k = block_k_for(K)
    block_m = block_m_for(M)
    return SkinnyConfig(
        block_n=64,
        block_m=block_m,
        block_k=block_k,
        k_split=k_split_for(N, K, block_k, DEFAULT_TARGET_PROGRAMS),
        num_stages=default_stages(64, block_m, block_k),
    )


# ---------------------------------------------------------------------------------------------
# Pieces shared by both kernels (inlined by Triton).


@triton.jit
def _pdl_prologue(w_ptr, offs_n, N, stride_wn, k_lo, k_hi, PREFETCH_K: tl.constexpr):
    """Programmatic dependent launch: this grid may start while the previous kernel on the
    stream is still running. Before waiting for it, only ask L2 to fetch the first PREFETCH_K
    elements (from ``k_lo``, clamped below ``k_hi``) of the weight rows ``offs_n``
    (prefetch.global.L2 is a hint: the data is read after the wait, from L2, which is the point
    of coherence, so a weight written by the previous kernel is still read correctly). Nothing
    is loaded into registers or written before the wait; the next kernel may launch as soon as
    every program gets here."""
    tl.extra.cuda.gdc_launch_dependents()
    pf_rows = tl.minimum(offs_n, N - 1).to(tl.int64)[:, None] * stride_wn
    pf_cols = tl.minimum(k_lo + tl.arange(0, PREFETCH_K // 64)[None, :] * 64, k_hi - 1)
    tl.inline_asm_elementwise("prefetch.global.L2 [$1]; mov.u32 $0, 0;", "=r,l", [w_ptr + pf_rows + pf_cols],
                              dtype=tl.int32, is_pure=False, pack=1)
    tl.extra.cuda.gdc_wait()


@triton.jit
def _load_tiles(w_rows, x_cols, offs_k, mask_n, mask_m, K, EVEN_N: tl.constexpr, EVEN_K: tl.constexpr):
    """The weight tile ``w[BLOCK_N, BLOCK_K]`` (streamed once: ``evict_first``) and the token
    tile ``x^T[BLOCK_K, BLOCK_M]`` at K offsets ``offs_k``; out-of-range elements read 0."""
    if EVEN_K:
        x_mask = mask_m[None, :]
        if EVEN_N:
            w = tl.load(w_rows + offs_k[None, :], eviction_policy="evict_first")
        else:
            w = tl.load(w_rows + offs_k[None, :], mask=mask_n[:, None], other=0.0, eviction_policy="evict_first")
    else:
        mask_k = offs_k < K
        x_mask = mask_m[None, :] & mask_k[:, None]
        w = tl.load(w_rows + offs_k[None, :], mask=mask_n[:, None] & mask_k[None, :], other=0.0,
                    eviction_policy="evict_first")
    xt = tl.load(x_cols + offs_k[:, None], mask=x_mask, other=0.0)
    return w, xt


@triton.jit
def _flush_chunk(total, acc, flush):
    """Chunked fp32 accumulation: at a chunk end (``flush``) the running chunk ``acc`` is added
    into ``total`` and restarts from 0, so no fp32 chain is longer than CHUNK_TILES * BLOCK_K
    products plus the number of chunks (a 7168-long single chain erred 1.5x more than cuBLAS at
    fp32 out). Callers flush at fixed K offsets, so the order stays a function of the shape."""
    return tl.where(flush, total + acc, total), tl.where(flush, 0.0, acc)


@triton.jit
def _bias_store(acc, b_ptr, y_ptr, offs_n, offs_m, mask_n, mask_m, stride_ym, HAS_BIAS: tl.constexpr):
    """Epilogue: ``y^T`` tile = fp32 ``acc`` (+ bias in fp32), rounded once to y's dtype."""
    if HAS_BIAS:
        acc += tl.load(b_ptr + offs_n, mask=mask_n, other=0.0).to(tl.float32)[:, None]
    y_ptrs = y_ptr + offs_m[None, :] * stride_ym + offs_n[:, None]
    tl.store(y_ptrs, acc.to(y_ptr.dtype.element_ty), mask=mask_n[:, None] & mask_m[None, :])


@triton.jit
def _partial_handoff(acc, slot, pieces, counter, part_ptr, b_ptr, y_ptr, offs_n, offs_m, mask_n, mask_m, M, N,
                     stride_ym, HAS_BIAS: tl.constexpr, REDUCE_UNROLL: tl.constexpr):
    """Deterministic reduction of an output tile computed in ``pieces`` parts over K.

    Stores the fp32 partial ``acc`` as piece ``slot`` of the workspace ``[slots, M, N]``, then
    announces arrival on the tile's int32 ``counter`` (integer atomic, acq_rel). The last of the
    ``pieces`` programs to arrive sums the partials in the fixed order ``0, 1, ..., pieces-1``,
    adds bias, writes ``y`` and resets the counter to 0 for the next call. No float atomics.
    """
    out_mask = mask_n[:, None] & mask_m[None, :]
    tile_elems = tl.cast(M, tl.int64) * N  # int64: slots * M * N may pass 2^31 at large M
    part_tile = part_ptr + offs_m.to(tl.int64)[None, :] * N + offs_n[:, None]
    tl.store(part_tile + slot * tile_elems, acc, mask=out_mask)
    # Every thread's partial is stored before one thread announces arrival (release).
    tl.debug_barrier()
    arrived = tl.atomic_add(counter, 1, sem="acq_rel", scope="gpu")
    if arrived == pieces - 1:
        # The loads of a group of REDUCE_UNROLL pieces are independent and issued together (one
        # L2 round trip per group, not per piece); pieces past the end load 0.0, and x + 0.0 == x.
        total = tl.zeros_like(acc)
        for s0 in range(0, pieces, REDUCE_UNROLL):
            for i in tl.static_range(REDUCE_UNROLL):
                # .cg: read the other SMs' partials from L2, never from a stale L1 line.
                total += tl.load(part_tile + (s0 + i) * tile_elems, mask=out_mask & (s0 + i < pieces),
                                 other=0.0, cache_modifier=".cg")
        _bias_store(total, b_ptr, y_ptr, offs_n, offs_m, mask_n, mask_m, stride_ym, HAS_BIAS)
        tl.store(counter, 0)


# ---------------------------------------------------------------------------------------------
# Classic grid: one program per (weight tile, K split, token tile).


@triton.jit(do_not_specialize=["M"])
def _skinny_linear_kernel(
    x_ptr, w_ptr, b_ptr, y_ptr, part_ptr, count_ptr,
    M, N, K, K_SPLIT,
    stride_xm, stride_wn, stride_ym,
    HAS_BIAS: tl.constexpr, SPLIT: tl.constexpr, EVEN_N: tl.constexpr, EVEN_K: tl.constexpr,
    BLOCK_N: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr, NUM_STAGES: tl.constexpr,
    REDUCE_UNROLL: tl.constexpr, CHUNK_TILES: tl.constexpr, PDL: tl.constexpr, PREFETCH_K: tl.constexpr,
):
    pid_n = tl.program_id(0)
    pid_k = tl.program_id(1)
    pid_m = tl.program_id(2)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_kb = tl.arange(0, BLOCK_K)
    mask_n = offs_n < N
    mask_m = offs_m < M
    # Weight rows in int64: W may exceed 2^31 elements (vocabulary projections).
    w_rows = w_ptr + offs_n.to(tl.int64)[:, None] * stride_wn
    x_cols = x_ptr + offs_m[None, :] * stride_xm

    k_lo = pid_k * K_SPLIT
    k_hi = tl.minimum(k_lo + K_SPLIT, K)
    if PDL:
        _pdl_prologue(w_ptr, offs_n, N, stride_wn, k_lo, k_hi, PREFETCH_K)

    total_acc = tl.zeros((BLOCK_N, BLOCK_M), dtype=tl.float32)
    acc = tl.zeros((BLOCK_N, BLOCK_M), dtype=tl.float32)
    for k in tl.range(k_lo, k_hi, BLOCK_K, num_stages=NUM_STAGES):
        w, xt = _load_tiles(w_rows, x_cols, k + offs_kb, mask_n, mask_m, K, EVEN_N, EVEN_K)
        acc = tl.dot(w, xt, acc)
        total_acc, acc = _flush_chunk(total_acc, acc, ((k - k_lo) // BLOCK_K) % CHUNK_TILES == CHUNK_TILES - 1)
    acc = total_acc + acc

    if SPLIT:
        counter = count_ptr + pid_m * tl.num_programs(0) + pid_n
        _partial_handoff(acc, pid_k, tl.num_programs(1), counter, part_ptr, b_ptr, y_ptr, offs_n, offs_m, mask_n,
                         mask_m, M, N, stride_ym, HAS_BIAS, REDUCE_UNROLL)
    else:
        _bias_store(acc, b_ptr, y_ptr, offs_n, offs_m, mask_n, mask_m, stride_ym, HAS_BIAS)


# ---------------------------------------------------------------------------------------------
# Stream-K: P persistent programs, each streaming one contiguous range of (weight tile, K tile).


@triton.jit
def _streamk_owner(u, P, U):
    """The program whose range ``[p*U//P, (p+1)*U//P)`` holds work unit ``u`` (P <= U)."""
    return (((u.to(tl.int64) + 1) * P - 1) // U).to(tl.int32)


@triton.jit
def _streamk_handoff(piece, n_tile, pid, P, U, KT, NT, pid_m, part_ptr, count_ptr, b_ptr, y_ptr, offs_m, mask_m, M, N,
                     stride_ym, HAS_BIAS: tl.constexpr, BLOCK_N: tl.constexpr, REDUCE_UNROLL: tl.constexpr):
    """Hands this program's ``piece`` of tile ``n_tile`` to :func:`_partial_handoff`: its slot is
    its rank among the programs covering the tile in K order, whose count fixes the sum."""
    tile_lo = n_tile * KT
    first = _streamk_owner(tile_lo, P, U)
    pieces = _streamk_owner(tile_lo + KT - 1, P, U) - first + 1
    offs_n = n_tile * BLOCK_N + tl.arange(0, BLOCK_N)
    _partial_handoff(piece, pid - first, pieces, count_ptr + pid_m * NT + n_tile, part_ptr, b_ptr, y_ptr, offs_n,
                     offs_m, offs_n < N, mask_m, M, N, stride_ym, HAS_BIAS, REDUCE_UNROLL)


@triton.jit(do_not_specialize=["M"])
def _streamk_linear_kernel(
    x_ptr, w_ptr, b_ptr, y_ptr, part_ptr, count_ptr,
    M, N, K,
    stride_xm, stride_wn, stride_ym,
    HAS_BIAS: tl.constexpr, SPLIT: tl.constexpr, EVEN_N: tl.constexpr, EVEN_K: tl.constexpr,
    BLOCK_N: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr, NUM_STAGES: tl.constexpr,
    REDUCE_UNROLL: tl.constexpr, CHUNK_TILES: tl.constexpr, PDL: tl.constexpr, PREFETCH_K: tl.constexpr,
):
    pid = tl.program_id(0)
    pid_m = tl.program_id(1)
    KT = tl.cdiv(K, BLOCK_K)
    NT = tl.cdiv(N, BLOCK_N)
    U = NT * KT  # work units u = n_tile * KT + k_tile (the host checks U < 2^31)
    P = tl.minimum(tl.num_programs(0), U)  # programs past U own nothing
    u_lo = tl.minimum(pid.to(tl.int64) * U // P, U).to(tl.int32)
    u_hi = tl.minimum((pid + 1).to(tl.int64) * U // P, U).to(tl.int32)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_kb = tl.arange(0, BLOCK_K)
    mask_m = offs_m < M
    x_cols = x_ptr + offs_m[None, :] * stride_xm
    if PDL:
        n0 = u_lo // KT
        _pdl_prologue(w_ptr, n0 * BLOCK_N + tl.arange(0, BLOCK_N), N, stride_wn, (u_lo - n0 * KT) * BLOCK_K, K,
                      PREFETCH_K)

    total = tl.zeros((BLOCK_N, BLOCK_M), dtype=tl.float32)
    acc = tl.zeros((BLOCK_N, BLOCK_M), dtype=tl.float32)
    head = tl.zeros((BLOCK_N, BLOCK_M), dtype=tl.float32)
    # One flat loop over the program's units, so the weight loads stay software pipelined across
    # tile boundaries (no pipeline drain and refill per tile). Only a range's first tile (head)
    # and last tile (tail) can be shared with other programs; their hand-off (a barrier and a
    # reduction loop) runs after this loop, because Triton does not pipeline a loop that
    # contains another loop. Tiles wholly inside the range are written here.
    for u in tl.range(u_lo, u_hi, num_stages=NUM_STAGES):
        n_tile = u // KT
        k_tile = u - n_tile * KT
        offs_n = n_tile * BLOCK_N + tl.arange(0, BLOCK_N)
        mask_n = offs_n < N
        # Weight rows in int64: W may exceed 2^31 elements (vocabulary projections).
        w_rows = w_ptr + offs_n.to(tl.int64)[:, None] * stride_wn
        w, xt = _load_tiles(w_rows, x_cols, k_tile * BLOCK_K + offs_kb, mask_n, mask_m, K, EVEN_N, EVEN_K)
        acc = tl.dot(w, xt, acc)
        # Chunks end at fixed absolute K offsets (k_tile % CHUNK_TILES), whatever the range.
        total, acc = _flush_chunk(total, acc, k_tile % CHUNK_TILES == CHUNK_TILES - 1)
        tile_end = k_tile == KT - 1
        whole = tile_end & (u - k_tile >= u_lo)
        if whole:
            _bias_store(total + acc, b_ptr, y_ptr, offs_n, offs_m, mask_n, mask_m, stride_ym, HAS_BIAS)
        if SPLIT:
            head = tl.where(tile_end & ~whole, total + acc, head)  # the head tile ends: keep its piece
        total = tl.where(tile_end, 0.0, total)
        acc = tl.where(tile_end, 0.0, acc)

    if SPLIT:
        # Head: the range starts inside a tile that ends inside the range.
        n_head = u_lo // KT
        if (u_lo - n_head * KT != 0) & ((n_head + 1) * KT <= u_hi):
            _streamk_handoff(head, n_head, pid, P, U, KT, NT, pid_m, part_ptr, count_ptr, b_ptr, y_ptr, offs_m,
                             mask_m, M, N, stride_ym, HAS_BIAS, BLOCK_N, REDUCE_UNROLL)
        # Tail: the range ends inside a tile (possibly the head's, when the range lies in one tile).
        n_tail = (u_hi - 1) // KT
        if (u_hi > u_lo) & (u_hi - n_tail * KT != KT):
            _streamk_handoff(total + acc, n_tail, pid, P, U, KT, NT, pid_m, part_ptr, count_ptr, b_ptr, y_ptr,
                             offs_m, mask_m, M, N, stride_ym, HAS_BIAS, BLOCK_N, REDUCE_UNROLL)


@functools.lru_cache(maxsize=1024)
def streamk_max_pieces(N: int, K: int, block_n: int, block_k: int, programs: int) -> int:
    """Most programs that share one output tile under stream-K (the workspace slots needed).

    ``U = cdiv(N, block_n) * cdiv(K, block_k)`` units over ``P = min(programs, U)`` programs,
    program ``p`` owning ``[p*U//P, (p+1)*U//P)``; tile ``t`` (units ``t*KT .. t*KT+KT-1``) is
    shared by the programs from the owner of its first unit to the owner of its last. 1 means
    no tile is shared (no hand-off is compiled). Cached per shape.
    """
    k_tiles = triton.cdiv(K, block_k)
    units = triton.cdiv(N, block_n) * k_tiles
    if k_tiles <= 1 or units == 0:
        return 1
    p = min(programs, units)

    def owner(u: int) -> int:
        return ((u + 1) * p - 1) // units

    return max(owner(lo + k_tiles - 1) - owner(lo) + 1 for lo in range(0, units, k_tiles))


def _launch_streamk(x, weight, bias, out, config: SkinnyConfig, pdl: bool) -> None:
    M, K = x.shape
    N = weight.shape[0]
    n_tiles = triton.cdiv(N, config.block_n)
    if n_tiles * triton.cdiv(K, config.block_k) >= 2**31:
        raise ValueError(f"stream-K: {n_tiles} x {triton.cdiv(K, config.block_k)} work units exceed int32")
    m_tiles = triton.cdiv(M, config.block_m)
    pieces = streamk_max_pieces(N, K, config.block_n, config.block_k, config.programs)
    if pieces > 1:
        # Workspace [pieces, M, N] fp32: piece j of a tile (its j-th program in K order) at slot j.
        partials, counters = split_k_scratch(x.device, pieces * M * N, n_tiles * m_tiles)
    else:
        partials = counters = out  # never read: SPLIT is off
    _streamk_linear_kernel[(config.programs, m_tiles)](
        x, weight, bias if bias is not None else out, out, partials, counters,
        M, N, K,
        x.stride(0), weight.stride(0), out.stride(0),
        HAS_BIAS=bias is not None, SPLIT=pieces > 1,
        EVEN_N=N % config.block_n == 0, EVEN_K=K % config.block_k == 0,
        BLOCK_N=config.block_n, BLOCK_M=config.block_m, BLOCK_K=config.block_k,
        NUM_STAGES=config.num_stages, REDUCE_UNROLL=min(8, triton.next_power_of_2(pieces)),
        CHUNK_TILES=max(1, CHUNK_K // config.block_k), PDL=pdl, PREFETCH_K=PREFETCH_K,
        num_warps=config.num_warps, num_stages=config.num_stages, **({"launch_pdl": True} if pdl else {}),
    )


def skinny_linear(
    x: torch.Tensor,
    weight: torch.Tensor,
    bias: torch.Tensor | None,
    out: torch.Tensor,
    config: SkinnyConfig,
) -> torch.Tensor:
    """Launch the kernel: ``out[M, N] = x[M, K] @ weight[N, K]^T (+ bias[N])``; returns ``out``.

    ``config.programs > 0`` runs the stream-K kernel with that many persistent programs, 0 the
    classic grid. Expects checked inputs (see :func:`kimiops.gemm.linear.linear`): ``x`` 2-D with
    stride 1 along K, ``weight`` with stride 1 along K, ``bias`` contiguous, ``out`` contiguous
    ``[M, N]`` in x's dtype or fp32, all on one device. ``M = 0`` launches nothing.
    """
    M, K = x.shape
    N = weight.shape[0]
    if M == 0:
        return out
    pdl = config.pdl and supports_pdl(x.device)
    if config.programs and N and K:
        _launch_streamk(x, weight, bias, out, config, pdl)
        return out
    splits = max(1, triton.cdiv(K, config.k_split))
    n_tiles = triton.cdiv(N, config.block_n)
    m_tiles = triton.cdiv(M, config.block_m)
    if splits > 1:
        partials, counters = split_k_scratch(x.device, splits * M * N, n_tiles * m_tiles)
    else:
        partials = counters = out  # never read: SPLIT is off
    _skinny_linear_kernel[(n_tiles, splits, m_tiles)](
        x, weight, bias if bias is not None else out, out, partials, counters,
        M, N, K, config.k_split,
        x.stride(0), weight.stride(0), out.stride(0),
        HAS_BIAS=bias is not None, SPLIT=splits > 1,
        EVEN_N=N % config.block_n == 0, EVEN_K=K % config.block_k == 0,
        BLOCK_N=config.block_n, BLOCK_M=config.block_m, BLOCK_K=config.block_k,
        NUM_STAGES=config.num_stages, REDUCE_UNROLL=min(8, triton.next_power_of_2(splits)),
        CHUNK_TILES=max(1, CHUNK_K // config.block_k), PDL=pdl, PREFETCH_K=PREFETCH_K,
        num_warps=config.num_warps, num_stages=config.num_stages, **({"launch_pdl": True} if pdl else {}),
    )
    return out
