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

Batch invariance
    The K decomposition (``block_k``, ``k_split``) and ``block_n`` (which also picks the MMA
    instruction: ``mma.sync`` below 64 rows, ``wgmma`` from 64 on Hopper) are chosen from
    ``(N, K)`` only (see :mod:`kimiops.gemm.dispatch`), and the per-element sum order does not
    depend on which other rows share the tile, so row ``m`` of ``y`` gets the same bits whatever
    ``M`` is and whatever rows are batched with it. ``block_m``, ``num_warps`` and
    ``num_stages`` may vary with M: they change which program computes an element, not its sum
    order.

Tuning (H200, bf16, CUDA-graph replay over rotating weights, cold L2)
    ``benchmarks/bench_linear.py`` sweeps, per (N, K), ``block_k`` in :data:`BLOCK_K_CANDIDATES`
    times ``block_n`` in :data:`BLOCK_N_CANDIDATES` times the K splits of
    :func:`split_candidates`, and per M the :data:`TILE_CANDIDATES` (num_warps, num_stages);
    it writes the winners into ``kimiops/gemm/tables/sm90.json`` with the measured times and
    speedups next to each entry, and every candidate's best time per M into
    ``benchmarks/results/linear_sm90.json`` (``candidates``). :func:`default_config` is what
    runs when ``backend="triton"`` is forced on a shape the table does not list.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import triton
import triton.language as tl

from kimiops.arch import supports_pdl
from kimiops.gemm.scratch import split_k_scratch
from kimiops.intmath import cdiv, next_power_of_2
from kimiops.launch import launch
from kimiops.streams import on_device

#: Reference tile height used to turn a program target into a K split (independent of M).
SPLIT_REFERENCE_BLOCK_N = 64
DEFAULT_TARGET_PROGRAMS = 264
#: SMs the wave-balance heuristic of :func:`split_candidates` plans for (H200).
NUM_SMS = 132
#: Weight-tile heights swept per shape (shape-level: fixes the MMA family and so the K order).
BLOCK_N_CANDIDATES = (32, 64, 128)
#: K-tile widths swept per shape (for K >= 256). 256 won on 1024x2048 (bn 32: 3.28x / 1.53x over
#: cuBLAS at M = 1 / 8 vs 3.09x / 1.40x with 128) and lost a few % on 6144x2048 and 6144x6144
#: (H200, benchmarks/results/logs_h200_20261129c/linear_bk256.log); 512 lost everywhere.
BLOCK_K_CANDIDATES = (128, 256)
#: Per-M tiles swept by the benchmark: (num_warps, num_stages), stages clamped to shared memory.
#: (4, 3) added 2026-11-30: it won 2624x2048 (block_k 256, 5.67 vs 6.04 us at M = 1) and 2048x4096
#: at M = 32 (8.21 vs 8.23); (4, 2) and more K splits (``--split-limit 4``) won nothing
#: (``benchmarks/results/logs_h200_20261130l/r5_bench_linear_small_wide.log``).
TILE_CANDIDATES = ((4, 6), (8, 4), (4, 3))
#: PDL settings swept per M (the benchmark chains calls of the kernel, which PDL overlaps).
PDL_CANDIDATES = (False, True)
#: Shared memory the pipelined weight + token tiles of one program may take (H200: 227 KiB/SM).
SMEM_BUDGET = 200 * 1024
#: Longest fp32 accumulation chain (K elements) before the running chunk is added to the total.
CHUNK_K = 1024
#: Weight elements per row prefetched into L2 before waiting on the previous kernel (PDL). 2048 and
#: 8192 were slower on every issue shape but 2624x2048 (H200, 6144x2048 9.45 -> 10.77 us at 2048;
#: ``benchmarks/results/logs_h200_20261130l/r2_linear_early_weights.log``).
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
    return (programs / num_sms) / cdiv(programs, num_sms)


def split_candidates(N: int, K: int, block_n: int, block_k: int, limit: int = 3) -> list[int]:
    """K splits (``k_split`` values, in K elements) worth measuring for a tile height.

    No split when there are at least ``0.45 * NUM_SMS`` weight tiles (fewer, fuller SMs but no
    split-K hand-off); then the fewest splits whose program count fills the SMs to >= 90% (wave
    balance), and the next such. A function of ``(N, K, block_n, block_k)`` only. Timing every
    count from 1 to 8 on the shapes the sm90 table runs this kernel on found no better one (H100,
    ``benchmarks/tools/linear_triton_splits.py``, ``benchmarks/results/logs_20261206_s56/``).
    """
    n_tiles = cdiv(N, block_n)
    k_tiles = max(1, cdiv(K, block_k))
    out = []
    if n_tiles >= 0.45 * NUM_SMS:
        out.append(k_tiles * block_k)
    for splits in range(2, min(k_tiles, 32) + 1):
        ks = cdiv(k_tiles, splits)
        real = cdiv(k_tiles, ks)
        programs = n_tiles * real
        if programs >= 0.9 * NUM_SMS and wave_efficiency(programs) >= 0.9 and ks * block_k not in out:
            out.append(ks * block_k)
        if len(out) >= limit:
            break
    return out


@dataclass(frozen=True)
class SkinnyConfig:
    """Launch configuration of :func:`skinny_linear`.

    ``block_k`` and ``k_split`` fix the reduction order over K and must depend on ``(N, K)``
    only; the other fields may depend on M.
    """

    block_n: int
    block_m: int
    block_k: int
    k_split: int
    num_warps: int = 4
    num_stages: int = 4
    pdl: bool = False  # programmatic dependent launch + L2 prefetch (sm90+; ignored elsewhere)

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


def block_k_for(K: int) -> int:
    """K tile: 128, or the next power of two >= 16 for smaller K."""
    return 128 if K >= 128 else max(16, next_power_of_2(K))


def k_split_for(N: int, K: int, block_k: int, target_programs: int) -> int:
    """K elements per split so that ``cdiv(N, 64) * splits`` reaches ``target_programs``.

    A function of ``(N, K)`` and the target only: never of M.
    """
    n_tiles = cdiv(N, SPLIT_REFERENCE_BLOCK_N)
    k_tiles = max(1, cdiv(K, block_k))
    splits = min(k_tiles, max(1, cdiv(target_programs, n_tiles)))
    return cdiv(k_tiles, splits) * block_k


def exact_k_split(K: int, block_k: int, splits: int) -> int | None:
    """The ``k_split`` (a multiple of ``block_k``) that cuts K into exactly ``splits`` splits of whole
    K tiles, the last possibly shorter; ``None`` where no such split exists."""
    k_split = cdiv(cdiv(K, block_k), splits) * block_k
    return k_split if cdiv(K, k_split) == splits else None


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


@triton.jit
def prefetch_l2(ptrs):
    """Ask L2 for the 128-byte line of every address in ``ptrs`` (``prefetch.global.L2``: a hint,
    no register result, nothing read; the compiler must not drop it, hence ``is_pure=False``)."""
    tl.inline_asm_elementwise("prefetch.global.L2 [$1]; mov.u32 $0, 0;", "=r,l", [ptrs], dtype=tl.int32,
                              is_pure=False, pack=1)


@triton.jit(do_not_specialize=["M"])
def _skinny_linear_kernel(
    x_ptr, w_ptr, b_ptr, y_ptr, part_ptr, count_ptr,
    M, N, K, K_SPLIT,
    stride_xm, stride_wn, stride_ym,
    HAS_BIAS: tl.constexpr, SPLIT: tl.constexpr, EVEN_N: tl.constexpr, EVEN_K: tl.constexpr,
    BLOCK_N: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr, NUM_STAGES: tl.constexpr,
    REDUCE_UNROLL: tl.constexpr, CHUNK_TILES: tl.constexpr, PDL: tl.constexpr, PREFETCH_K: tl.constexpr,
    PREFETCH_STEP: tl.constexpr,
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
        # Programmatic dependent launch: this grid may start while the previous kernel on the
        # stream is still running. Before waiting for it, only ask L2 to fetch the first
        # PREFETCH_K elements of each of our weight rows (prefetch.global.L2 is a hint: the data
        # is read after the wait, from L2, which is the point of coherence, so a weight written
        # by the previous kernel is still read correctly). Nothing is loaded into registers or
        # written before the wait; the next kernel may launch as soon as we all get here.
        tl.extra.cuda.gdc_launch_dependents()
        pf_rows = tl.minimum(offs_n, N - 1).to(tl.int64)[:, None] * stride_wn
        for pf in tl.static_range(0, PREFETCH_K, PREFETCH_STEP):  # one 128-byte line per 64 elements
            if k_lo + pf < k_hi:
                pf_cols = tl.minimum(k_lo + pf + tl.arange(0, PREFETCH_STEP // 64)[None, :] * 64, k_hi - 1)
                prefetch_l2(w_ptr + pf_rows + pf_cols)
        tl.extra.cuda.gdc_wait()

    # Chunked fp32 accumulation: a fresh accumulator per CHUNK_TILES K tiles, added into the total
    # at the chunk's end, so no fp32 chain is longer than CHUNK_TILES * BLOCK_K products plus the
    # number of chunks (a 7168-long single chain erred 1.5x more than cuBLAS at fp32 out). The
    # chunk boundaries are fixed K offsets: the order stays a function of (N, K) only.
    total_acc = tl.zeros((BLOCK_N, BLOCK_M), dtype=tl.float32)
    acc = tl.zeros((BLOCK_N, BLOCK_M), dtype=tl.float32)
    for k in tl.range(k_lo, k_hi, BLOCK_K, num_stages=NUM_STAGES):
        offs_k = k + offs_kb
        if EVEN_K:
            x_mask = mask_m[None, :]
            if EVEN_N:
                w = tl.load(w_rows + offs_k[None, :], eviction_policy="evict_first")
            else:
                w = tl.load(w_rows + offs_k[None, :], mask=mask_n[:, None], other=0.0,
                            eviction_policy="evict_first")
        else:
            mask_k = offs_k < K
            x_mask = mask_m[None, :] & mask_k[:, None]
            w = tl.load(w_rows + offs_k[None, :], mask=mask_n[:, None] & mask_k[None, :], other=0.0,
                        eviction_policy="evict_first")
        xt = tl.load(x_cols + offs_k[:, None], mask=x_mask, other=0.0)
        acc = tl.dot(w, xt, acc)
        flush = ((k - k_lo) // BLOCK_K) % CHUNK_TILES == CHUNK_TILES - 1
        total_acc = tl.where(flush, total_acc + acc, total_acc)
        acc = tl.where(flush, 0.0, acc)
    acc = total_acc + acc

    out_mask = mask_n[:, None] & mask_m[None, :]
    y_ptrs = y_ptr + offs_m[None, :] * stride_ym + offs_n[:, None]
    if SPLIT:
        tile_elems = tl.cast(M, tl.int64) * N  # int64: splits * M * N may pass 2^31 at large M
        part_tile = part_ptr + offs_m.to(tl.int64)[None, :] * N + offs_n[:, None]
        tl.store(part_tile + pid_k * tile_elems, acc, mask=out_mask)
        # Every thread's partial is stored before one thread announces arrival (release).
        tl.debug_barrier()
        counter = count_ptr + pid_m * tl.num_programs(0) + pid_n
        splits = tl.num_programs(1)
        arrived = tl.atomic_add(counter, 1, sem="acq_rel", scope="gpu")
        if arrived == splits - 1:
            # Partials are summed in the fixed order 0, 1, ..., splits-1. The loads of a group of
            # REDUCE_UNROLL splits are independent and issued together (one L2 round trip per
            # group, not per split); splits past the end load 0.0, and x + 0.0 == x.
            total = tl.zeros((BLOCK_N, BLOCK_M), dtype=tl.float32)
            for s0 in range(0, splits, REDUCE_UNROLL):
                for i in tl.static_range(REDUCE_UNROLL):
                    # .cg: read the other SMs' partials from L2, never from a stale L1 line.
                    total += tl.load(part_tile + (s0 + i) * tile_elems, mask=out_mask & (s0 + i < splits),
                                     other=0.0, cache_modifier=".cg")
            if HAS_BIAS:
                total += tl.load(b_ptr + offs_n, mask=mask_n, other=0.0).to(tl.float32)[:, None]
            tl.store(y_ptrs, total.to(y_ptr.dtype.element_ty), mask=out_mask)
            tl.store(counter, 0)
    else:
        if HAS_BIAS:
            acc += tl.load(b_ptr + offs_n, mask=mask_n, other=0.0).to(tl.float32)[:, None]
        tl.store(y_ptrs, acc.to(y_ptr.dtype.element_ty), mask=out_mask)


def skinny_linear(
    x: torch.Tensor,
    weight: torch.Tensor,
    bias: torch.Tensor | None,
    out: torch.Tensor,
    config: SkinnyConfig,
) -> torch.Tensor:
    """Launch the kernel: ``out[M, N] = x[M, K] @ weight[N, K]^T (+ bias[N])``; returns ``out``.

    Expects checked inputs (see :func:`kimiops.gemm.linear.linear`): ``x`` 2-D with stride 1
    along K, ``weight`` with stride 1 along K, ``bias`` contiguous, ``out`` contiguous ``[M, N]``
    in x's dtype or fp32, all on one device. ``M = 0`` launches nothing.
    """
    M, K = x.shape
    N = weight.shape[0]
    if M == 0:
        return out
    splits = max(1, cdiv(K, config.k_split))
    n_tiles = cdiv(N, config.block_n)
    m_tiles = cdiv(M, config.block_m)
    pdl = config.pdl and supports_pdl(x.device)
    if splits > 1:
        partials, counters = split_k_scratch(x.device, splits * M * N, n_tiles * m_tiles)
    else:
        partials = counters = out  # never read: SPLIT is off
    with on_device(x.device):  # Triton launches on the current device; x may live on another GPU
        launch(
            _skinny_linear_kernel, (n_tiles, splits, m_tiles),
            x, weight, bias if bias is not None else out, out, partials, counters,
            M, N, K, config.k_split,
            x.stride(0), weight.stride(0), out.stride(0),
            HAS_BIAS=bias is not None, SPLIT=splits > 1,
            EVEN_N=N % config.block_n == 0, EVEN_K=K % config.block_k == 0,
            BLOCK_N=config.block_n, BLOCK_M=config.block_m, BLOCK_K=config.block_k,
            NUM_STAGES=config.num_stages, REDUCE_UNROLL=min(8, next_power_of_2(splits)),
            CHUNK_TILES=max(1, CHUNK_K // config.block_k), PDL=pdl, PREFETCH_K=PREFETCH_K,
            PREFETCH_STEP=min(PREFETCH_K, 512),
            num_warps=config.num_warps, num_stages=config.num_stages, **({"launch_pdl": True} if pdl else {}),
        )
    return out
