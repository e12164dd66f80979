"""Sequential stage of chunked KDA prefill: state recurrence fused with the output.

What it computes (DESIGN.md section 1), for one sequence ``n``, value head ``hv`` and the state
columns ``[vb*BV, vb*BV + BV)``, walking the sequence's chunks in order with the state held
transposed, ``S^T [BV, K]`` (fp32), in registers::

    u^T  = v^T tb^T                             # [BV, C]   (u = Tinv (beta v))
    v'^T = u^T - S^T w^T                        # [BV, C]
    o^T  = S^T qg^T + v'^T A_qk^T               # [BV, C]  -> o (v's dtype), rows of the chunk
    S^T  = S^T diag(gC) + v'^T kg               # [BV, K]

(the transpose of ``v' = u - w S``, ``o = qg S + A_qk v'``, ``S = diag(gC) S + kg^T v'``), where
``w, tb = Tinv diag(beta), qg, kg, A_qk, gC`` come from the intra-chunk stage (``chunk_intra.py``)
through HBM and v is the input. ``u`` does not depend on the state, so its product is off the
recurrence's critical path; forming it here instead of in stage 1 reads v (bf16) and a C x C
tile per chunk instead of an fp32 C x V tile.
The output is computed right here from the state in registers, so per-chunk states never go to
HBM. The V columns of the state evolve independently, so they are split across CTAs (``BV``);
the CTAs of one head read the same w/qg/kg/A_qk tiles, mostly from L2.

Why transposed: every product then has its left operand in registers, produced by the previous
product's accumulator (``S^T``, ``v'^T``), and its right operand a scratch tile straight from
shared memory. With the state on the right (``w S``) each chunk staged S and v' through shared
memory (with barriers) to make them right operands, and the scales of their fp16 splits were
CTA-wide max reductions; here a scale is per row (a reduction inside one warp where the warps split
the rows). With ``BV = 64`` and 4 warps the products are ``wgmma`` with register A operands and no
operand crosses warps; with ``BV = 16`` and 2 warps (the narrow tile) the warps split the columns, so the
left operands and the row maxima still cross them through shared memory.

Initial state: ``h0[h0_indices[n]]`` (or ``h0[n]``), zeros for index -1 or without ``h0``. Final
state to ``ht[ht_indices[n]]`` (or ``ht[n]``), nothing for index -1. Each program reads its own
state tile before its first chunk and writes the same tile after its last, so ``ht`` may alias
``h0`` (a pool updated in place) as long as sequences own distinct slots. Layouts ``[.., K, V]``
or, with ``STATE_V_FIRST``, ``[.., V, K]``.

Grid: ``(HV, V // BV, N)`` (``(V // BV, HV, N)`` with V tiles adjacent; the flat
``(N * HV * V // BV,)`` beyond 65535 sequences, same order), sequence slowest, so whole sequences
are dispatched one after the other. Varlen batches are dispatched longest sequence first
(``longest_first_kernel`` sorts the lengths on the device into scratch): the longest sequence is
the critical path of this stage, and starting it last (as plain index order may) leaves the GPU
waiting on it alone. The loop over chunks has a runtime trip count ``cdiv(len_n, C)`` read from
``cu_seqlens`` on the device (zero-length sequences copy h0 to ht). A launch may cover only the
chunk slots ``[slot_lo, slot_hi)`` (``PARTED``, the pipelined parts of ``chunk.py``), resuming from
and leaving the state in fp32 scratch. With ``ZERO_PADDING_ROWS`` (varlen calls of ``KDABackend.extend``,
whose inputs may carry CUDA-graph padding rows past ``cu_seqlens[N]``), the programs that end the
last sequence also write zeros to o's rows ``[cu_seqlens[N], rows)``, as the decode kernel and the
torch path do; nothing else writes them.

Numerics: exponentials were all taken by the intra stage (arguments <= 0). ``u^T = v^T tb^T`` is a
dot with ``INV_PREC`` (tf32 by default, as stage 1's inverse; its operands exact in tf32: stage 1
stores tb rounded to nearest, v's bf16 / fp16 values are exact and fp32 v is rounded here by
``tf32_operand``. Rounding tb here instead made this stage 4-6% slower on the H200,
``logs_h200_20261202/`` run 2) and fp32 accumulation. The fp32 left operands
(``S^T``, then ``v'^T``) are scaled row by row so each row's max is 2^14 and split into fp16
``hi + lo`` halves (~22-bit significand, no fp16 range issue; a row scale commutes with a left
product), so every product is an fp16 tensor-core dot with exact products and fp32 accumulation
against the fp16 scratch tiles. The state update ``v'^T kg`` uses both halves of v'; ``S^T w^T``
and the output (``S^T qg^T``, ``v'^T A_qk^T``) only the hi halves, which matches the 11-bit
precision of their fp16 scratch operands (``split_ws`` / ``split_kv`` below). S and all
accumulators are fp32.
"""

from __future__ import annotations

import triton
import triton.language as tl

from kimiops.kda.kernels.chunk_layout import CALL_COUNTS
from kimiops.kda.kernels.dot_operands import f16_hi_lo, tf32_operand

# Tuning choices of this kernel; benchmarks/bench_kda_prefill.py --ablate state times candidates.
# The default is the wide tile, BV 64 with 4 warps (one warpgroup, M = 64 wgmma with register A
# operands; fewer re-reads of each head's tiles). Until the sixteenth session few (sequence, head)
# pairs (< 128, e.g. one prompt) took the narrow tile, BV 16 (256 CTAs at 32 heads), to fill the 132
# SMs; whole calls of one part (below 4096 tokens: longer prompts run in pipelined parts, which
# already took the wide tile) are faster with the wide one at every length measured (H200, B1, 32
# heads, in-kernel gate, CUDA-graph medians in us, mean of two rounds, logs_h200_20261130l/r7_state_crossover.log):
#   | T      | 1024  | 2048  | 3072  | 4064  |
#   | narrow | 118.2 | 214.3 | 309.6 | 404.0 |
#   | wide   | 113.7 | 206.5 | 298.7 | 389.4 |
# and at T = 64 / 256 the wide tile without power-of-two scales beat narrow too (32.9 vs 34.0,
# 42.7 vs 45.1; r1_prefill_short_sweep.log, "state 5"). The narrow tile alone was faster at B1
# T8192 in one part (0.341 vs 0.369 ms, the stage timed alone), a call that always runs in parts.
# hi_first: which half of a split the accumulator chain starts with (see ``_two_products``).
# split_ws / split_kv: whether ``S^T w^T`` / ``v'^T kg`` also take the lo halves (else hi only, 11
# bits). In the interpreter (fp32 stage 1, T = 4096, softplus gates) dropping S's lo half in
# ``S^T w^T`` left the errors unchanged to three digits (w itself is stored in fp16, 11 bits);
# dropping v's lo half too raised the state error 2.2e-4 -> 2.9e-4 (the limit is 2.5e-3). On the
# H200 (logs_h200_20261130c/ablate_state_split_ws.log, pytest_gpu_chunk_split_ws.log): split_ws
# off B1 T8192 0.384 -> 0.343 ms, B4 T4096 0.328 -> 0.297, B8 T1024 0.172 -> 0.163, errors at
# T = 4096 unchanged (o 1.73e-3, state 4.34e-4); both off 0.316 / 0.297 / 0.157 with state error
# 4.64e-4 (kept off the default: it buys little beyond split_ws and costs precision).
# v_tiles_adjacent: dispatch order inside a sequence (see the grid above).
# pow2_scale: the fp16 split's row scale a power of two taken from the row maximum's exponent bits
# (exact scaling; no reciprocal on the recurrence's critical path: the wide config's SASS loses its
# 8 MUFU.RCP per chunk step) instead of 2^14 / max. Eleventh session, this stage alone on the H200
# (logs_h200_20261130g/ablate_state_tree_max.log, rows "serial max" vs "division scale"): wide B1
# T8192 0.348 -> 0.317 ms, B4 T4096 0.277 -> 0.263, B8 T1024 0.148 -> 0.142; narrow B1 0.341 ->
# 0.364 (B4 / B8 equal), so narrow keeps the division. The same run timed the row maxima as a tree of column halves (SASS max chain
# per step 34 -> 8 instructions): 0.317 either way, so the plain reduction stays.
# Ninth session, u formed here from v (logs_h200_20261130e/bench_prefill_u_in_state.log, this stage
# alone): wide B1 T8192 0.369 -> 0.345 ms, B4 T4096 0.297 -> 0.277, B8 T1024 0.163 -> 0.148.
# H200, CUDA-graph medians of this stage alone, H=HV=32, K=V=128, chunks of 32 (seventh session,
# logs_h200_20261130c/ablate_state_rows2.log; ms; both halves in both state products):
#   | case (pairs)        | column form, previous default | rows BV16 2w 4st | rows BV64 4w 3st |
#   | B1 T8192 (32)       | 0.507 (BV32 4w 3st)           | 0.388            | 0.534            |
#   | B4 T4096 (128)      | 0.546 (BV32 2w 2st)           | 0.778            | 0.340            |
#   | B8 T1024 (256)      | 0.285 (BV32 2w 2st)           | 0.402            | 0.185            |
# Also measured there: rows BV16 2w 3st 0.403 / 5 stages 0.658 / 4 warps 0.504 (B1); BV64 2 stages
# 0.399 / 0.209 (B4 / B8), 8 warps 0.998-1.014, BV128 8w 0.440 / 0.230; in ablate_state_rows.log:
# BV16 with 1 warp 0.475-0.496 (B1).
# The column form with tf32 hi/lo splits (no max reductions) was 2x slower (ablate_state_split.log).
# Dispatch order (logs_h200_20261130/prefill_order_ab.log, column form): sequences one after the
# other. Longest sequence first: varlen 7 sequences / 16384 tokens 0.900 -> 0.570 ms (column form).
STATE_CONFIG_NARROW = {"BV": 16, "num_warps": 2, "num_stages": 4, "hi_first": True, "split_ws": False,
                       "split_kv": True, "pow2_scale": False}
# In pipelined parts (``chunk.py``) the launcher gives the wide tile 4 stages instead
# (``PIPELINE_CONFIG["state_stages"]``: one state CTA per SM beside stage 1).
# Fortieth session: this tile written in Gluon (its off-chain wgmma groups asynchronous, two or
# three waits per step instead of six, tiles by TMA into a ring) matched it to 1e-6; alone it was
# slower where this stage bounds the call (B1 T8192 0.348 against 0.317 ms, B1 T32768 1.367 against
# 1.251) and within 4% elsewhere (B8 T1024 0.139 against 0.144, B4 T4096 0.269 against 0.268);
# issuing the chain's products first and the rest behind the state update made it slower still
# (0.38-0.83x at B1). Deleted (logs_h200_20261202g/, docs/history/prefill.md).
# Forty-first session (logs_h200_20261202h/, whole calls in graph ms, g / gate): one CTA of 8 warps
# per head (BV 128: its 244 registers x 256 threads leave no room for stage 1 on its SM) in B1's
# parts 0.614 / 0.620 at T8192 against 0.518 / 0.534, 2.18-2.19 / 2.20-2.21 at T32768 against 1.88
# / 1.94.
# The chunk step without the barriers of its tail (gC's layout conversion taken after S's split; o
# stored by inline PTX from the accumulator, which holds o's [64, 32] tile 4 times over, so 64
# stores per thread) made this stage alone 1.5-1.9x slower at B1 T8192; with gC loaded a step
# ahead it was 2-4% faster at B8 T1024 but 28% slower in one launch at B1 (variant_*.patch there).
STATE_CONFIG_WIDE = {"BV": 64, "num_warps": 4, "num_stages": 3, "hi_first": True, "split_ws": False,
                     "split_kv": True, "pow2_scale": True}
# Head dim K = 256 (the issue asks for it where it costs little; Kimi checkpoints use 128). The wide
# tile's S^T [64, 256] does not fit the registers (offline sm_90, triton 3.6: 1.1 KB of spills at 2
# or 3 stages; BV 32 with 4 warps: 255 registers, no spills, 72 KiB of shared memory at 2 stages;
# benchmarks/results/offline_compile_20261201_k256.log). H200, K = V = 256, H = HV = 16, precomputed
# g, CUDA-graph medians of the whole call in ms, B1 T8192 (4 parts) / B4 T4096 (one part)
# (logs_h200_20261201/r1_head_dims_256.log, r2_head_dims.log):
#   | BV 32, 4 warps, 2 stages (4 in parts, as PIPELINE_CONFIG says) | 0.897 / 1.504 |
#   | the same, 3 stages                                             | 0.903 / 1.681 |
#   | the same, 2 stages in parts too                                | 0.988 / -     |
#   | BV 16, 4 warps, 2 / 3 stages                                   | 1.056 / 1.922, 1.156 / 2.125 |
#   | BV 32, 8 warps                                                 | 1.107 / 2.417 |
#   | BV 64, 8 warps, 2 stages (68 B of spills)                      | 1.534 / 2.036 |
# FLA 1.200 / 2.327 ms in the same run; B1 in one part 1.073.
STATE_CONFIG_K256 = {"BV": 32, "num_warps": 4, "num_stages": 2, "hi_first": True, "split_ws": False,
                     "split_kv": True, "pow2_scale": True}


def state_config_for(K: int) -> dict:
    """Default config of the state stage for head dim ``K`` (a copy: callers may update it)."""
    return dict(STATE_CONFIG_K256 if K > 128 else STATE_CONFIG_WIDE)


STATE_CANDIDATES = [dict(STATE_CONFIG_NARROW, **c) for c in (  # what the benchmarks sweep
    {"BV": 16, "num_warps": 2, "num_stages": 4, "hi_first": True, "split_ws": False},
    {"BV": 16, "num_warps": 2, "num_stages": 3, "hi_first": True, "split_ws": False},
    {"BV": 16, "num_warps": 2, "num_stages": 4, "hi_first": True, "split_ws": True},
    {"BV": 16, "num_warps": 1, "num_stages": 3, "hi_first": False, "split_ws": False},
    {"BV": 32, "num_warps": 2, "num_stages": 3, "hi_first": True, "split_ws": False},
    {"BV": 64, "num_warps": 4, "num_stages": 3, "hi_first": True, "split_ws": False},
    {"BV": 64, "num_warps": 4, "num_stages": 2, "hi_first": True, "split_ws": False},
)]


@triton.jit
def _split_f16_rows(x, POW2: tl.constexpr):
    """fp32 ``x [R, D]`` -> (hi, lo, 1/s [R]) with ``x * s[:, None] = hi + lo`` to ~22 bits, one scale
    per row: max|row * s| = 2^14, or in [2^14, 2^15) with ``POW2`` (s a power of two taken from the
    maximum's exponent bits: exact scaling, no reciprocal). Where the warps split the accumulator's
    rows (1 warp; BV 64 with 4 warps) a row lives in one warp and its maximum needs no shared
    memory; with BV 16 and 2 warps the warps split the columns and the maxima cross them."""
    m = tl.max(tl.abs(x), axis=1)
    if POW2:
        # biased exponent e of m, clamped to [15, 254] so both powers below are normal floats;
        # s = 2^(141 - e) puts m * s in [2^14, 2^15) (fp16 holds up to 65504)
        e = tl.minimum(tl.maximum((m.to(tl.int32, bitcast=True) >> 23) & 0xFF, 15), 254)
        s = ((268 - e) << 23).to(tl.float32, bitcast=True)
        inv_s = ((e - 14) << 23).to(tl.float32, bitcast=True)
    else:
        s = 16384.0 / tl.maximum(m, 1e-30)
        inv_s = 1.0 / s
    hi, lo = f16_hi_lo(x * s[:, None])
    return hi, lo, inv_s


@triton.jit
def _two_products(hi, lo, b, HI_FIRST: tl.constexpr):
    """``(hi + lo) b`` as two fp16 tensor-core dots in one fp32 accumulator chain, ``hi`` first
    (``HI_FIRST``) or ``lo`` first. (Written as ``dot(hi, b) + dot(lo, b)``, Triton folds the add
    into the same chain; scaling each product to keep the two independent measured slower.)"""
    if HI_FIRST:
        return tl.dot(lo, b, tl.dot(hi, b))
    else:
        return tl.dot(hi, b, tl.dot(lo, b))


@triton.jit
def _chunk_step(w, tb, qg, kg, aqk, gc, v, o, s_w, s_tb, s_qg, s_kg, s_aqk, s_gc, hv, cv, b_st, slot, t0, eos,
                v_on, HV: tl.constexpr, K: tl.constexpr, V: tl.constexpr, C: tl.constexpr, HI_FIRST: tl.constexpr,
                SPLIT_WS: tl.constexpr, SPLIT_KV: tl.constexpr, INV_PREC: tl.constexpr,
                POW2_SCALE: tl.constexpr, STORE_O: tl.constexpr):
    """One chunk on the transposed state ``S^T [BV, K]``: returns the new ``S^T``, stores the chunk's
    output rows unless ``STORE_O`` is off (see the module docstring). ``v_on`` (runtime bool): with
    it off v reads as 0, so ``u = 0`` (a state map's columns, ``SEG`` 1)."""
    hv64 = hv.to(tl.int64)
    slot = slot.to(tl.int64)
    rk = tl.arange(0, K)
    rc = tl.arange(0, C)
    o_ck = slot * C * K + rc[:, None] * K + rk[None, :]
    o_cct = slot * C * C + rc[None, :] * C + rc[:, None]                                # [C, C] transposed
    tok = (t0 + rc).to(tl.int64)
    live = (rc < eos - t0)[None, :]
    b_w = tl.load(w + hv64 * s_w + o_ck)
    b_qg = tl.load(qg + hv64 * s_qg + o_ck)
    b_kg = tl.load(kg + hv64 * s_kg + o_ck)
    b_vt = tl.load(v + (tok[None, :] * HV + hv) * V + cv[:, None], mask=live & v_on, other=0.0)  # v^T [BV, C]
    b_tbt = tl.load(tb + hv64 * s_tb + o_cct)                                           # tb^T [C, C]
    b_at = tl.load(aqk + hv64 * s_aqk + o_cct)                                          # A_qk^T [C, C]
    b_gc = tl.load(gc + hv64 * s_gc + slot * K + rk)

    b_vt32 = b_vt.to(tl.float32)
    if b_vt.dtype == tl.float32:  # bf16 / fp16 values are exact in tf32, fp32 inputs are rounded
        b_vt32 = tf32_operand(b_vt32, INV_PREC)
    b_ut = tl.dot(b_vt32, b_tbt, input_precision=INV_PREC)                              # u^T [BV, C]

    s_hi, s_lo, inv_s = _split_f16_rows(b_st, POW2_SCALE)
    w16t = tl.trans(b_w.to(tl.float16))                                                 # [K, C]
    if SPLIT_WS:
        b_ws = _two_products(s_hi, s_lo, w16t, HI_FIRST) * inv_s[:, None]         # [BV, C]
    else:
        b_ws = tl.dot(s_hi, w16t) * inv_s[:, None]
    b_qs = tl.dot(s_hi, tl.trans(b_qg.to(tl.float16)))
    b_vn = b_ut - b_ws
    v_hi, v_lo, inv_v = _split_f16_rows(b_vn, POW2_SCALE)
    b_o = b_qs * inv_s[:, None] + tl.dot(v_hi, b_at.to(tl.float16)) * inv_v[:, None]
    if SPLIT_KV:
        b_kv = _two_products(v_hi, v_lo, b_kg.to(tl.float16), HI_FIRST)
    else:
        b_kv = tl.dot(v_hi, b_kg.to(tl.float16))
    b_st = b_st * b_gc[None, :] + b_kv * inv_v[:, None]

    if STORE_O:
        tl.store(o + (tok[None, :] * HV + hv) * V + cv[:, None], b_o.to(o.dtype.element_ty), mask=live)
    return b_st


@triton.jit
def _state_slot(indices, n, HAS_IDX: tl.constexpr):
    """Pool slot of sequence ``n`` (int64): ``indices[n]`` (-1: none), or ``n`` without indices."""
    if HAS_IDX:
        return tl.load(indices + n).to(tl.int64)
    return n.to(tl.int64)


@triton.jit
def _state_offsets(cv, rk, K: tl.constexpr, V: tl.constexpr, STATE_V_FIRST: tl.constexpr):
    """Offsets of the transposed tile ``S^T [BV, K]`` (columns ``cv`` of S) in one head's state,
    ``[V, K]`` with ``STATE_V_FIRST``, else ``[K, V]``."""
    if STATE_V_FIRST:
        return cv[:, None] * K + rk[None, :]
    else:
        return rk[None, :] * V + cv[:, None]


@triton.jit
def _initial_tile(h0, h0_indices, n, hv, s_off, b_s, HV: tl.constexpr, K: tl.constexpr, V: tl.constexpr,
                  HAS_IDX: tl.constexpr):
    """Sequence ``n``'s initial state tile from ``h0[h0_indices[n]]`` (``h0[n]`` without indices) as
    fp32, or ``b_s`` unchanged for index -1."""
    i0 = _state_slot(h0_indices, n, HAS_IDX)
    if i0 >= 0:
        b_s = tl.load(h0 + (i0 * HV + hv) * K * V + s_off).to(tl.float32)
    return b_s


@triton.jit
def _zero_rows(o, hv, cv, lo, hi, HV: tl.constexpr, V: tl.constexpr, C: tl.constexpr, BV: tl.constexpr):
    """Zeros to o's token rows ``[lo, hi)`` in head ``hv`` and columns ``cv``, C rows a store."""
    rc = tl.arange(0, C)
    zero = tl.zeros([C, BV], dtype=o.dtype.element_ty)
    for r0 in range(lo, hi, C):
        tok = (r0 + rc).to(tl.int64)
        tl.store(o + (tok[:, None] * HV + hv) * V + cv[None, :], zero, mask=(tok < hi)[:, None])


@triton.jit
def _sequence_span(cu_seqlens, n, T, IS_VARLEN: tl.constexpr):
    """Token rows ``[bos, eos)`` of sequence ``n`` (int32): from ``cu_seqlens``, or ``n * T`` on."""
    if IS_VARLEN:
        bos = tl.load(cu_seqlens + n).to(tl.int32)
        eos = tl.load(cu_seqlens + n + 1).to(tl.int32)
    else:
        bos = n * T
        eos = bos + T
    return bos, eos


# Launch config of ``segment_starts_kernel``: 16 state columns per CTA, 8 warps, the next map's load
# pipelined (2 stages): no spills (offline sm_90; 4 warps spill 460 B holding the 128 x 128 fp32
# map). ``prec``: the products' input_precision ("tf32x3": three tf32 passes, ~fp32 accuracy).
# ``map_block_bytes``: the largest block of a map's fp32 columns held per pipeline stage (the whole
# map at K <= 128, 64 of its 256 columns at K = 256, whose 256 KiB map does not fit shared memory;
# offline sm_90 that spills 1440 B, none at K = 128: offline_compile_20261201_s23_segments.log).
# Its cost on the H200 (logs_h200_20261201b/r2_segment_stages.log, 4 heads, B1 T8192, profiler
# means per call): 40 us of a 157 us call with 16 segments (2.7 us per chained step), 82 of 196 with
# 32. Other configs, whole call in ms with 16 / 32 segments (r4_segment_starts_configs.log): this one
# 0.161 / 0.200; 3 stages 0.159 / 0.197, 1 stage 0.167 / 0.214; 4 warps 0.187 / 0.253, 16 warps
# 0.170 / 0.220; BV 32 0.189 / 0.261; "ieee" (fp32 FMAs) 0.868 / 1.680; "tf32" (one pass, ~10
# bits: not exact enough for a state carried over thousands of tokens) 0.151 / 0.181.
SEGMENT_STARTS_CONFIG = {"BV": 16, "num_warps": 8, "num_stages": 2, "prec": "tf32x3", "map_block_bytes": 65536}


def starts_map_columns(K: int, config: dict | None = None) -> int:
    """``segment_starts_kernel``'s ``BJ``: the map's columns per block at head dim ``K`` (``K``: the
    whole map), from ``map_block_bytes`` of ``config`` (default ``SEGMENT_STARTS_CONFIG``)."""
    cfg = SEGMENT_STARTS_CONFIG if config is None else config
    return min(K, max(16, cfg["map_block_bytes"] // (4 * K)))


@triton.jit
def _segments_of(n_chunks, seg_len):
    """Segments of a sequence of ``n_chunks`` chunks: ``cdiv(n_chunks, seg_len)``, and one for an
    empty sequence (which copies h0 to ht)."""
    return tl.maximum(tl.cdiv(n_chunks, seg_len), 1)


@triton.jit(do_not_specialize=CALL_COUNTS)
def segment_starts_kernel(maps, starts, h0, h0_indices, cu_seqlens, s_maps, s_starts, T, seg_len, seg_max,
                          HV: tl.constexpr, K: tl.constexpr, V: tl.constexpr, C: tl.constexpr, BV: tl.constexpr,
                          STATE_V_FIRST: tl.constexpr, HAS_H0: tl.constexpr, HAS_H0_IDX: tl.constexpr,
                          IS_VARLEN: tl.constexpr, PREC: tl.constexpr, BJ: tl.constexpr):
    """Start states of a segmented walk (``chunk_state_kernel``'s ``SEG``) of sequence n, which has
    ``P_n = max(1, cdiv(chunks_n, seg_len))`` segments: ``S_0 = h0`` (zeros without it or for index
    -1), ``S_z = M_{z-1} S_{z-1} + L_{z-1}`` for z = 1 .. P_n - 1, from ``maps`` (fp32
    ``[HV, N * (seg_max - 1), K + V, K]``, sequence n's block at ``n * (seg_max - 1) + z``: ``M^T``
    rows then ``L^T`` rows) into ``starts`` (fp32 ``[HV, N * seg_max, V, K]``, ``S_z^T`` at
    ``n * seg_max + z``, z >= 1). Grid ``(HV, V // BV, N)``; sequential over z. Products with fp32
    accumulation at ``PREC`` (``SEGMENT_STARTS_CONFIG``). With ``BJ < K`` each step takes the map's
    columns ``BJ`` at a time (the whole map would not fit shared memory), stores the new state's
    blocks and reads the state back whole after a CTA barrier."""
    hv = tl.program_id(0)
    vb = tl.program_id(1)
    n = tl.program_id(2)
    bos, eos = _sequence_span(cu_seqlens, n, T, IS_VARLEN)
    n_seg = _segments_of(tl.cdiv(eos - bos, C), seg_len)
    rk = tl.arange(0, K)
    cv = vb * BV + tl.arange(0, BV)
    b_s = tl.zeros([BV, K], dtype=tl.float32)
    if HAS_H0:
        b_s = _initial_tile(h0, h0_indices, n, hv, _state_offsets(cv, rk, K, V, STATE_V_FIRST), b_s,
                            HV, K, V, HAS_H0_IDX)
    n64 = n.to(tl.int64)
    z_maps = maps + hv.to(tl.int64) * s_maps + n64 * (seg_max - 1) * (K + V) * K  # advanced per step
    z_out = starts + hv.to(tl.int64) * s_starts + n64 * seg_max * V * K
    o_s = _state_offsets(cv, rk, K, V, True)  # maps and starts hold S^T rows: [.., V, K]
    if BJ == K:
        for _ in range(0, n_seg - 1):
            m_t = tl.load(z_maps + rk[:, None] * K + rk[None, :])         # M^T [K, K]
            l_t = tl.load(z_maps + K * K + o_s)                            # L^T [BV, K]
            b_s = tl.dot(b_s, m_t, l_t, input_precision=PREC)              # (M S + L)^T
            z_out += V * K
            tl.store(z_out + o_s, b_s)
            z_maps += (K + V) * K
    else:
        rj = tl.arange(0, BJ)
        # one stage: the state goes through memory, and no load may be hoisted above its stores
        for _ in tl.range(0, n_seg - 1, num_stages=1):
            z_out += V * K
            for j in tl.static_range(0, K // BJ):
                o_j = cv[:, None] * K + j * BJ + rj[None, :]
                m_t = tl.load(z_maps + rk[:, None] * K + j * BJ + rj[None, :])  # M^T [K, BJ]
                l_t = tl.load(z_maps + K * K + o_j)                            # L^T [BV, BJ]
                tl.store(z_out + o_j, tl.dot(b_s, m_t, l_t, input_precision=PREC))
            tl.debug_barrier()  # the CTA's stores above are visible to all its threads after it
            b_s = tl.load(z_out + o_s)
            z_maps += (K + V) * K


@triton.jit(do_not_specialize=CALL_COUNTS)
def longest_first_kernel(cu_seqlens, order, N, BLOCK: tl.constexpr):
    """``order[r]`` = index of the sequence with the r-th largest length (ties: lower index first).
    One program; ``N <= BLOCK`` (a power of two). Sorts the int64 keys
    ``length * BLOCK + (BLOCK - 1 - n)`` in descending order. Padding entries get length -2^40,
    below any int32 difference, so the first N keys are always the N sequences (a permutation of
    0..N-1 even for malformed cu_seqlens). ``N`` is not specialized (``chunk_layout.CALL_COUNTS``): as a
    multiple of 16 it compiles to the same SASS up to ``BLOCK`` 128 and saves 8-56 of 700-3,500
    instructions from 256 on (offline sm_90, ``cpu_checks_20261205_s51/sort_block_sass.log``)."""
    n = tl.arange(0, BLOCK)
    live = n < N
    lens = tl.load(cu_seqlens + n + 1, mask=live, other=0).to(tl.int64) - \
        tl.load(cu_seqlens + n, mask=live, other=0).to(tl.int64)
    lens = tl.where(live, lens, -(1 << 40))
    keys = tl.sort(lens * BLOCK + (BLOCK - 1 - n).to(tl.int64), descending=True)
    tl.store(order + n, (BLOCK - 1 - (keys & (BLOCK - 1))).to(tl.int32), mask=live)


@triton.jit(do_not_specialize=CALL_COUNTS)
def chunk_state_kernel(
    w, tb, qg, kg, aqk, gc, v, o, h0, h0_indices, ht, ht_indices, cu_seqlens, order, carry, track, track_idx,
    s_w, s_tb, s_qg, s_kg, s_aqk, s_gc, s_carry,
    T, NT, slot_lo, slot_hi, seg_len, seg_max, rows,
    HV: tl.constexpr, K: tl.constexpr, V: tl.constexpr, C: tl.constexpr, BV: tl.constexpr,
    STATE_V_FIRST: tl.constexpr, HAS_H0: tl.constexpr, HAS_H0_IDX: tl.constexpr,
    HAS_HT: tl.constexpr, HAS_HT_IDX: tl.constexpr, IS_VARLEN: tl.constexpr, ORDERED: tl.constexpr,
    HI_FIRST: tl.constexpr, SPLIT_WS: tl.constexpr, SPLIT_KV: tl.constexpr, V_TILES_ADJACENT: tl.constexpr,
    GRID_3D: tl.constexpr, PARTED: tl.constexpr, INV_PREC: tl.constexpr, PDL: tl.constexpr,
    POW2_SCALE: tl.constexpr, SEG: tl.constexpr, TRACK_STEPS: tl.constexpr, ZERO_PADDING_ROWS: tl.constexpr = False,
):
    """Scratch inputs ``[HV, NC, ...]`` (head strides ``s_*``); v and o ``[*, HV, V]`` token-major;
    states fp32. ``ORDERED``: the programs of the r-th sequence slot work on sequence ``order[r]``
    (``longest_first_kernel``), so the longest sequences, the critical path, start first. ``T``: each
    sequence's rows in a fixed-length call, 0 and unread in a varlen call (``chunk_layout.kernel_rows``);
    the counts of ``chunk_layout.CALL_COUNTS`` are not specialized.

    ``PARTED``: this launch walks only the chunks whose slots lie in ``[slot_lo, slot_hi)`` (one
    part of a pipelined call, see ``chunk.py``); a sequence that began in an earlier part resumes
    from ``carry`` (fp32 ``[HV, N, K, V]``, head stride ``s_carry``) and one that goes on in a
    later part leaves its state there. fp32 in, fp32 out: the parts chain bit-exactly.
    ``GRID_3D``: grid ``(HV, NV, N)`` (``(NV, HV, N)`` with ``V_TILES_ADJACENT``) instead of the
    flat ``(N * HV * NV,)``; same dispatch order.
    ``PDL``: launched as a programmatic dependent of its part's stage 1 (``chunk.py``): lets the
    next kernel (stage 1 of the next part) be scheduled once every program of this grid runs, then
    waits for stage 1 to complete before reading anything. (That stage 1 completed only after the
    previous part's state stage, so the carry is complete too.)
    ``SEG``: every sequence cut into segments of ``seg_len`` chunks, sequence n into
    ``P_n = max(1, cdiv(chunks_n, seg_len))`` (at most ``seg_max``), all walked at once (DESIGN.md
    section 1: chained segment maps); the grid's third index is ``n * seg_max + z`` (``SEG = 2``) or
    ``n * (seg_max - 1) + z`` (``SEG = 1``), and programs past ``P_n`` return at once.
    ``SEG = 1`` (grid ``(HV, (K + V) // BV, N * (seg_max - 1))``): segment z's map and local state
    (z < P_n - 1), the columns of ``Z = [M | L]`` with ``Z_end = A_c ... A_first Z_0``
    (``A = diag(gC) - kg^T w``, u = 0) from ``Z_0 = [I | 0]`` and ``u`` from v on L's columns; no
    output; ``Z^T [K + V, K]`` goes to ``carry`` (fp32 ``[HV, N * (seg_max - 1), K + V, K]``, head
    stride ``s_carry``). ``segment_starts_kernel`` then chains ``S_z = M_{z-1} S_{z-1} + L_{z-1}``
    into ``carry`` of ``SEG = 2`` (fp32 ``[HV, N * seg_max, V, K]``, ``S_z^T`` at z >= 1), from
    which ``SEG = 2`` (grid ``(HV, V // BV, N * seg_max)``)
    walks each segment again with the output; segment 0 starts from h0, the last one writes ht.
    ``TRACK_STEPS`` > 0 (not with ``SEG = 1``): state snapshots for prefix caching. Sequence n with
    ``track_idx[n] = j >= 0`` writes the fp32 state after its first ``j * TRACK_STEPS`` chunks to
    ``track[n]`` (layout of ``ht``): the walk covering chunk ``j * TRACK_STEPS`` stores the state it
    enters that chunk with, or, where that is the sequence's end, the walk that ends it stores its
    final state. Every chunk index has one walk in any cut into parts or segments, so exactly one
    program per state tile writes it; other values write nothing.
    ``ZERO_PADDING_ROWS`` (varlen, not with ``SEG = 1``): ``rows`` is o's token count (read only
    then); the programs that end sequence N - 1 also zero o's rows ``[cu_seqlens[N], rows)`` in
    their head and columns."""
    tl.static_assert(not ZERO_PADDING_ROWS or (IS_VARLEN and SEG != 1), "padding rows follow a varlen output walk")
    if PDL:
        tl.extra.cuda.gdc_launch_dependents()
        tl.extra.cuda.gdc_wait()
    tl.static_assert(SEG == 0 or GRID_3D, "segments are the grid's third index")
    tl.static_assert(SEG != 1 or TRACK_STEPS == 0, "the map walk has no state to snapshot")
    NV: tl.constexpr = (K + V) // BV if SEG == 1 else V // BV
    if GRID_3D:
        if V_TILES_ADJACENT:
            vb = tl.program_id(0)
            hv = tl.program_id(1)
        else:
            hv = tl.program_id(0)
            vb = tl.program_id(1)
        n = tl.program_id(2)
    else:
        pid = tl.program_id(0)
        if V_TILES_ADJACENT:
            vb = pid % NV
            hv = (pid // NV) % HV
        else:
            hv = pid % HV
            vb = (pid // HV) % NV
        n = pid // (NV * HV)
    seg = n * 0
    if SEG == 1:
        seg = n % (seg_max - 1)
        n = n // (seg_max - 1)
    if SEG == 2:
        seg = n % seg_max
        n = n // seg_max
    if ZERO_PADDING_ROWS:  # the call's sequence count, from the grid
        if GRID_3D:
            n_last = tl.num_programs(2) // (seg_max if SEG == 2 else 1) - 1
        else:
            n_last = tl.num_programs(0) // (NV * HV) - 1
    if ORDERED:
        n = tl.load(order + n)
    bos, eos = _sequence_span(cu_seqlens, n, T, IS_VARLEN)
    if IS_VARLEN:
        slot0 = bos // C + n
    else:
        slot0 = n * NT

    rk = tl.arange(0, K)
    cv = vb * BV + tl.arange(0, BV)
    v_on = True
    if SEG == 1:  # columns [0, K) of Z are the map's, [K, K + V) the local state's
        col = cv
        v_on = vb >= K // BV
        cv = tl.maximum(col - K, 0)
    s_off = _state_offsets(cv, rk, K, V, STATE_V_FIRST)  # the state tile is held transposed, S^T [BV, K]

    nch = tl.cdiv(eos - bos, C)
    c_lo = nch * 0
    c_hi = nch
    starts_here = True
    ends_here = True
    if SEG != 0:
        n_seg = _segments_of(nch, seg_len)
        if SEG == 1:
            if seg >= n_seg - 1:  # the last segment's map is never needed
                return
        if seg >= n_seg:
            return
        c_lo = seg * seg_len
        c_hi = tl.minimum(c_lo + seg_len, nch)
        starts_here = seg == 0
        ends_here = seg == n_seg - 1
    if PARTED:
        # the sequence's slots are [slot0, slot0 + nch); an empty sequence counts as owning slot0,
        # so exactly one part copies its h0 to ht
        last = slot0 + tl.maximum(nch, 1) - 1
        if (slot0 >= slot_hi) | (last < slot_lo):
            return
        starts_here = slot0 >= slot_lo
        ends_here = last < slot_hi
        c_lo = tl.minimum(tl.maximum(slot_lo - slot0, 0), nch)
        c_hi = tl.minimum(tl.maximum(slot_hi - slot0, 0), nch)

    # Where the zeros are stored is measured (H100, benchmarks/results/logs_20261206_s59/, runs 1-3): after
    # the walk they added 1.6-2.6% to one prompt's call at 4 heads (segments) and nothing elsewhere, while a
    # parted launch's chunk loop compiles to a faster schedule with them there (789 -> 798 instructions,
    # registers alike; offline sm_90): 1.5-3.7% off one prompt's call at 32 heads, padding rows or none.
    if ZERO_PADDING_ROWS:
        if not PARTED:  # before the walk, which hides the stores
            if ends_here & (n == n_last):
                _zero_rows(o, hv, cv, eos, rows, HV, V, C, BV)

    b_s = tl.zeros([BV, K], dtype=tl.float32)
    if SEG == 1:  # Z_0^T: the identity's rows on the map's columns, zeros on the local state's
        b_s = tl.where((col[:, None] == rk[None, :]) & (vb < K // BV), 1.0, 0.0)
    if SEG == 2:
        if seg > 0:
            z_start = n.to(tl.int64) * seg_max + seg
            b_s = tl.load(carry + hv.to(tl.int64) * s_carry + z_start * V * K + _state_offsets(cv, rk, K, V, True))
    if HAS_H0:
        if starts_here:
            b_s = _initial_tile(h0, h0_indices, n, hv, s_off, b_s, HV, K, V, HAS_H0_IDX)
    if PARTED:
        o_carry = hv.to(tl.int64) * s_carry + n.to(tl.int64) * K * V + rk[None, :] * V + cv[:, None]
        if slot0 < slot_lo:
            b_s = tl.load(carry + o_carry, cache_modifier=".cg")  # written by another launch

    tc = -1
    c_mid = c_lo
    if TRACK_STEPS > 0:
        # the walk is split at the snapshot's chunk so its store sits between two loops: stored
        # from inside the loop, the tile's layout conversion spilled (offline sm_90, 48-572 B)
        tc = tl.load(track_idx + n).to(tl.int32)
        tc = tl.where(tc >= 0, tc * TRACK_STEPS, -1)
        c_mid = tl.minimum(tl.maximum(tc, c_lo), c_hi)
        for c in range(c_lo, c_mid):
            b_s = _chunk_step(w, tb, qg, kg, aqk, gc, v, o, s_w, s_tb, s_qg, s_kg, s_aqk, s_gc, hv, cv, b_s,
                              slot0 + c, bos + c * C, eos, v_on, HV, K, V, C, HI_FIRST, SPLIT_WS, SPLIT_KV, INV_PREC,
                              POW2_SCALE, SEG != 1)
        if (tc == c_mid) & (c_mid < c_hi):
            tl.store(track + (n.to(tl.int64) * HV + hv) * K * V + s_off, b_s)
    for c in range(c_mid, c_hi):
        b_s = _chunk_step(w, tb, qg, kg, aqk, gc, v, o, s_w, s_tb, s_qg, s_kg, s_aqk, s_gc, hv, cv, b_s,
                          slot0 + c, bos + c * C, eos, v_on, HV, K, V, C, HI_FIRST, SPLIT_WS, SPLIT_KV, INV_PREC,
                          POW2_SCALE, SEG != 1)

    if SEG == 1:
        z_map = n.to(tl.int64) * (seg_max - 1) + seg
        o_z = hv.to(tl.int64) * s_carry + z_map * (K + V) * K + _state_offsets(col, rk, K, K + V, True)
        tl.store(carry + o_z, b_s)

    if TRACK_STEPS > 0:
        if ends_here & (tc == nch):
            tl.store(track + (n.to(tl.int64) * HV + hv) * K * V + s_off, b_s)
    if HAS_HT:
        if ends_here:
            i1 = _state_slot(ht_indices, n, HAS_HT_IDX)
            if i1 >= 0:
                tl.store(ht + (i1 * HV + hv) * K * V + s_off, b_s)
    if PARTED:
        if last >= slot_hi:
            tl.store(carry + o_carry, b_s)
        if ZERO_PADDING_ROWS:  # after the walk: the faster schedule (above)
            if ends_here & (n == n_last):
                _zero_rows(o, hv, cv, eos, rows, HV, V, C, BV)
