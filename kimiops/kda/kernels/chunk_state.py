"""Sequential stage of chunked KDA prefill: state recurrence fused with the output.

What it computes (DESIGN.md section 1), for one sequence ``n``, value head ``hv`` and the state
columns ``[vb*BV, vb*BV + BV)``, walking the sequence's chunks in order with the state
``S [K, BV]`` (fp32) in registers::

    v'  = u - w S                               # [C, BV]
    o   = qg S + A_qk v'                        # [C, BV]  -> o (v's dtype), rows of the chunk
    S   = diag(gC) S + kg^T v'                  # [K, BV]

where ``w, u, qg, kg, A_qk, gC`` come from the intra-chunk stage (``chunk_intra.py``) through HBM.
The output is computed right here from the state in registers, so per-chunk states never go to
HBM. The V columns of the state evolve independently, so they are split across CTAs (``BV``);
the CTAs of one head read the same w/qg/kg/A_qk tiles, mostly from L2.

Initial state: ``h0[h0_indices[n]]`` (or ``h0[n]``), zeros for index -1 or without ``h0``. Final
state to ``ht[ht_indices[n]]`` (or ``ht[n]``), nothing for index -1. Each program reads its own
state tile before its first chunk and writes the same tile after its last, so ``ht`` may alias
``h0`` (a pool updated in place) as long as sequences own distinct slots. Layouts ``[.., K, V]``
or, with ``STATE_V_FIRST``, ``[.., V, K]``.

Grid: ``(HV, V // BV, N)`` (``(V // BV, HV, N)`` with V tiles adjacent; the flat
``(N * HV * V // BV,)`` beyond 65535 sequences, same order), sequence slowest, so whole sequences
are dispatched one after the other (the flat grid cost 8% at B1 T8192: 0.565 vs 0.524 ms, same
order, same code). Inside a sequence either the V tiles of one head are neighbours
(``v_tiles_adjacent``: they read the same chunk tiles, which then come from L2; many pairs) or the
heads are (few pairs, where every tile is resident at once anyway). Varlen batches are dispatched longest sequence first
(``longest_first_kernel`` sorts the lengths on the device into scratch): the longest sequence is
the critical path of this stage, and starting it last (as plain index order may) leaves the GPU
waiting on it alone. The loop over chunks has a runtime trip count ``cdiv(len_n, C)`` read from
``cu_seqlens`` on the device (zero-length sequences copy h0 to ht). A launch may cover only the
chunk slots ``[slot_lo, slot_hi)`` (``PARTED``, the pipelined parts of ``chunk.py``), resuming from
and leaving the state in fp32 scratch.

Numerics: exponentials were all taken by the intra stage (arguments <= 0). Default
(``split_f16``): the fp32 right-hand sides of the products (S, then v') are scaled so their max
is 2^14 and split into fp16 ``hi + lo`` halves (~22-bit significand, no fp16 range issue), so
every product is an fp16 tensor-core dot with exact products and fp32 accumulation, the fp16
scratch operands (w, qg, kg, A_qk) feed the tensor cores straight from shared memory, and S is
represented more precisely than tf32 would (11 bits). The state update (``w S``, ``kg^T v'``)
uses both halves; the output (``qg S``, ``A_qk v'``) only the hi halves, which matches the 11-bit
precision of its fp16 scratch operands. The two max reductions per chunk sit on the sequential
path. Alternative (``split_f16=False``): fp32 operands with ``PREC`` (tf32). S and all
accumulators are fp32.
"""

from __future__ import annotations

import triton
import triton.language as tl

# Tuning choices of this kernel; benchmarks/bench_kda_prefill.py sweeps the candidates and prints
# the winner. Few (sequence, head) pairs: narrow V tiles are what fill the 132 SMs. Many pairs
# (>= WIDE_MIN_PAIRS): the grid fills the SMs anyway, and 2 warps per tile let more tiles run per SM.
# split_chains: the hi and lo products written as two dots that are added (see ``_chunk_step``); Triton
# folds that back into one accumulator chain (hi first), so it differs from the one-chain form only in
# order. It measured faster where one tile's chunk loop is latency-bound (few pairs), not where many
# tiles share an SM.
# v_tiles_adjacent: dispatch order inside a sequence (see the grid above). longest_first (default
# on; tests and benchmarks switch it off): varlen batches run longest sequence first.
# H200, CUDA-graph medians of this stage alone, H=HV=32, K=V=128, chunks of 32, the output from the
# hi halves only (fifth session, logs_h200_20261130/prefill_ablate_round2.log):
#   B1 T8192 (32 pairs): BV32/4w/3 stages split chains 0.525 ms, one chain 0.547, BV16/2-4w 0.576,
#     BV32/2w/2 stages 0.676 (before this session's changes: 0.580, prefill_state_split_chains_ab.log)
#   B4 T4096 (128 pairs): BV32/2w/2 stages one chain 0.509 vs 0.524 split; BV64/4w 0.713, BV32/4w/3 0.773
#   B8 T1024 (256 pairs): BV32/2w/2 stages one chain 0.275 vs 0.278 split; BV64/4w 0.363, BV32/4w/3 0.401
# Dispatch order (logs_h200_20261130/prefill_order_ab.log): V tiles of a head adjacent, sequences
# one after the other: B8 T1024 0.274 -> 0.262 ms, B4 T4096 0.511 -> 0.505. At B1 T8192 (narrow
# config) the one-dimensional grid costs 0.524 -> 0.575 with V tiles adjacent and 0.566 with heads
# adjacent (bench_prefill_final.log), the order of the old three-dimensional grid (N, HV, NV): an
# open regression, see docs/prefill.md.
# Longest sequence first: varlen 7 sequences / 16384 tokens 0.900 -> 0.570 ms (index order with
# the new grid 0.825); 8 x 1024 + 8192 last 1.146 -> 0.814.
# (With chunks of 64, earlier sessions: BV32/4w/3 stages 0.397 at B1 T8192, BV64/4w/2 stages 0.312 at
# B8 T1024; logs_h200_20261129b/.)
STATE_CONFIG = {"BV": 32, "num_warps": 4, "num_stages": 3, "split_f16": True, "hi_first": True}
STATE_CONFIG_WIDE = {"BV": 32, "num_warps": 2, "num_stages": 2, "split_f16": True, "v_tiles_adjacent": True}
WIDE_MIN_PAIRS = 128
STATE_CANDIDATES = [
    {"BV": 32, "num_warps": 4, "num_stages": 3, "split_f16": True, "hi_first": True},
    {"BV": 32, "num_warps": 4, "num_stages": 3, "split_f16": True},
    {"BV": 32, "num_warps": 2, "num_stages": 2, "split_f16": True},
    {"BV": 16, "num_warps": 1, "num_stages": 3, "rows": True},
    {"BV": 16, "num_warps": 1, "num_stages": 2, "rows": True},
    {"BV": 64, "num_warps": 4, "num_stages": 2, "split_f16": True},
    {"BV": 32, "num_warps": 4, "num_stages": 2, "split_f16": False},
]


def state_config_for(pairs: int) -> dict:
    """Tuning dict of ``chunk_state_kernel`` for ``pairs = N * HV`` (sequences x value heads)."""
    return STATE_CONFIG_WIDE if pairs >= WIDE_MIN_PAIRS else STATE_CONFIG


@triton.jit
def _split_f16(x):
    """fp32 ``x`` -> (hi, lo, 1/s) with ``x * s = hi + lo`` to ~22 bits, hi/lo fp16, max|x*s| = 2^14."""
    s = 16384.0 / tl.maximum(tl.max(tl.abs(x)), 1e-30)
    xs = x * s
    hi = xs.to(tl.float16)
    lo = (xs - hi.to(tl.float32)).to(tl.float16)
    return hi, lo, 1.0 / s


@triton.jit
def _two_products(a, hi, lo, HI_FIRST: tl.constexpr):
    """``a (hi + lo)`` as two fp16 tensor-core dots in one fp32 accumulator chain, ``hi`` first
    (``HI_FIRST``) or ``lo`` first. (Written as ``dot(a, hi) + dot(a, lo)``, Triton folds the add
    into the same chain; scaling each product to keep them independent measured slower, see the
    tuning notes.)"""
    if HI_FIRST:
        return tl.dot(a, lo, tl.dot(a, hi))
    else:
        return tl.dot(a, hi, tl.dot(a, lo))


@triton.jit
def _two_products_left(hi, lo, b, HI_FIRST: tl.constexpr):
    """``(hi + lo) b``: :func:`_two_products` with the split operand on the left."""
    if HI_FIRST:
        return tl.dot(lo, b, tl.dot(hi, b))
    else:
        return tl.dot(hi, b, tl.dot(lo, b))


@triton.jit
def _split_f16_rows(x):
    """fp32 ``x [R, D]`` -> (hi, lo, 1/s [R]) with ``x * s[:, None] = hi + lo`` to ~22 bits, one scale
    per row (max|row * s| = 2^14). A row of the mma accumulator layout lives in one warp (a quad of
    lanes), so the row maxima need no shared memory."""
    s = 16384.0 / tl.maximum(tl.max(tl.abs(x), axis=1), 1e-30)
    xs = x * s[:, None]
    hi = xs.to(tl.float16)
    lo = (xs - hi.to(tl.float32)).to(tl.float16)
    return hi, lo, 1.0 / s


@triton.jit
def _chunk_step(w, u, qg, kg, aqk, gc, o, s_w, s_u, s_qg, s_kg, s_aqk, s_gc, hv, cv, b_s, slot, t0, eos,
                HV: tl.constexpr, K: tl.constexpr, V: tl.constexpr, C: tl.constexpr, PREC: tl.constexpr,
                SPLIT_F16: tl.constexpr, HI_FIRST: tl.constexpr):
    """One chunk: returns the new state, stores the chunk's output rows."""
    hv64 = hv.to(tl.int64)
    slot = slot.to(tl.int64)
    rk = tl.arange(0, K)
    rc = tl.arange(0, C)
    o_ck = slot * C * K + rc[:, None] * K + rk[None, :]
    b_w = tl.load(w + hv64 * s_w + o_ck)
    b_qg = tl.load(qg + hv64 * s_qg + o_ck)
    b_kg = tl.load(kg + hv64 * s_kg + o_ck)
    b_u = tl.load(u + hv64 * s_u + slot * C * V + rc[:, None] * V + cv[None, :])
    b_a = tl.load(aqk + hv64 * s_aqk + slot * C * C + rc[:, None] * C + rc[None, :])
    b_gc = tl.load(gc + hv64 * s_gc + slot * K + rk)

    if SPLIT_F16:
        # fp16 operands, the fp32 right-hand sides split into hi + lo halves after scaling their
        # max to 2^14 (22-bit significand, no fp16 range issue); products exact, fp32 accumulate.
        # The output takes the hi halves only: 11 significant bits, the precision of its other
        # operands (qg, A_qk are stored in fp16).
        s_hi, s_lo, inv_s = _split_f16(b_s)
        w16 = b_w.to(tl.float16)
        q16 = b_qg.to(tl.float16)
        b_ws = _two_products(w16, s_hi, s_lo, HI_FIRST)
        b_qs = tl.dot(q16, s_hi)
        b_vn = b_u - b_ws * inv_s
        v_hi, v_lo, inv_v = _split_f16(b_vn)
        a16 = b_a.to(tl.float16)
        k16t = tl.trans(b_kg.to(tl.float16))
        b_o = b_qs * inv_s + tl.dot(a16, v_hi) * inv_v
        b_s = b_s * b_gc[:, None] + _two_products(k16t, v_hi, v_lo, HI_FIRST) * inv_v
    else:
        b_w = b_w.to(tl.float32)
        b_qg = b_qg.to(tl.float32)
        b_kg = b_kg.to(tl.float32)
        b_a = b_a.to(tl.float32)
        b_vn = b_u - tl.dot(b_w, b_s, input_precision=PREC)
        b_o = tl.dot(b_qg, b_s, input_precision=PREC)
        b_o = tl.dot(b_a, b_vn, b_o, input_precision=PREC)
        b_s = tl.dot(tl.trans(b_kg), b_vn, b_s * b_gc[:, None], input_precision=PREC)

    tok = (t0 + rc).to(tl.int64)
    tl.store(o + (tok[:, None] * HV + hv) * V + cv[None, :], b_o.to(o.dtype.element_ty),
             mask=(rc < eos - t0)[:, None])
    return b_s


@triton.jit
def _chunk_step_rows(w, u, qg, kg, aqk, gc, o, s_w, s_u, s_qg, s_kg, s_aqk, s_gc, hv, cv, b_st, slot, t0, eos,
                     HV: tl.constexpr, K: tl.constexpr, V: tl.constexpr, C: tl.constexpr, HI_FIRST: tl.constexpr):
    """One chunk on the transposed state ``S^T [BV, K]``: returns the new ``S^T``, stores the chunk's
    output rows. Every product has a register-resident left operand derived from the previous
    product's accumulator (S^T, v'^T), so nothing but the scratch tiles goes through shared
    memory, and the fp16 scales are per row (per V column), reduced inside one warp::

        v'^T = u^T - S^T w^T          o^T = S^T qg^T + v'^T A_qk^T          S^T = S^T diag(gC) + v'^T kg
    """
    hv64 = hv.to(tl.int64)
    slot = slot.to(tl.int64)
    rk = tl.arange(0, K)
    rc = tl.arange(0, C)
    o_ck = slot * C * K + rc[:, None] * K + rk[None, :]
    b_w = tl.load(w + hv64 * s_w + o_ck)
    b_qg = tl.load(qg + hv64 * s_qg + o_ck)
    b_kg = tl.load(kg + hv64 * s_kg + o_ck)
    b_ut = tl.load(u + hv64 * s_u + slot * C * V + rc[None, :] * V + cv[:, None])        # [BV, C]
    b_at = tl.load(aqk + hv64 * s_aqk + slot * C * C + rc[None, :] * C + rc[:, None])   # A_qk^T [C, C]
    b_gc = tl.load(gc + hv64 * s_gc + slot * K + rk)

    s_hi, s_lo, inv_s = _split_f16_rows(b_st)
    w16t = tl.trans(b_w.to(tl.float16))                                                 # [K, C]
    b_ws = _two_products_left(s_hi, s_lo, w16t, HI_FIRST) * inv_s[:, None]             # [BV, C]
    b_qs = tl.dot(s_hi, tl.trans(b_qg.to(tl.float16)))
    b_vn = b_ut - b_ws
    v_hi, v_lo, inv_v = _split_f16_rows(b_vn)
    b_o = b_qs * inv_s[:, None] + tl.dot(v_hi, b_at.to(tl.float16)) * inv_v[:, None]
    b_st = b_st * b_gc[None, :] + _two_products_left(v_hi, v_lo, b_kg.to(tl.float16), HI_FIRST) * inv_v[:, None]

    tok = (t0 + rc).to(tl.int64)
    tl.store(o + (tok[None, :] * HV + hv) * V + cv[:, None], b_o.to(o.dtype.element_ty),
             mask=(rc < eos - t0)[None, :])
    return b_st


@triton.jit
def _state_slot(indices, n, HAS_IDX: tl.constexpr):
    """Pool slot of sequence ``n`` (int64): ``indices[n]`` (-1: none), or ``n`` without indices."""
    if HAS_IDX:
        return tl.load(indices + n).to(tl.int64)
    return n.to(tl.int64)


@triton.jit
def longest_first_kernel(cu_seqlens, order, N, BLOCK: tl.constexpr):
    """``order[r]`` = index of the sequence with the r-th largest length (ties: lower index first).
    One program; ``N <= BLOCK`` (a power of two). Sorts the int64 keys
    ``length * BLOCK + (BLOCK - 1 - n)`` in descending order. Padding entries get length -2^40,
    below any int32 difference, so the first N keys are always the N sequences (a permutation of
    0..N-1 even for malformed cu_seqlens)."""
    n = tl.arange(0, BLOCK)
    live = n < N
    lens = tl.load(cu_seqlens + n + 1, mask=live, other=0).to(tl.int64) - \
        tl.load(cu_seqlens + n, mask=live, other=0).to(tl.int64)
    lens = tl.where(live, lens, -(1 << 40))
    keys = tl.sort(lens * BLOCK + (BLOCK - 1 - n).to(tl.int64), descending=True)
    tl.store(order + n, (BLOCK - 1 - (keys & (BLOCK - 1))).to(tl.int32), mask=live)


@triton.jit
def chunk_state_kernel(
    w, u, qg, kg, aqk, gc, o, h0, h0_indices, ht, ht_indices, cu_seqlens, order, carry,
    s_w, s_u, s_qg, s_kg, s_aqk, s_gc, s_carry,
    T, NT, slot_lo, slot_hi,
    HV: tl.constexpr, K: tl.constexpr, V: tl.constexpr, C: tl.constexpr, BV: tl.constexpr,
    STATE_V_FIRST: tl.constexpr, HAS_H0: tl.constexpr, HAS_H0_IDX: tl.constexpr,
    HAS_HT: tl.constexpr, HAS_HT_IDX: tl.constexpr, IS_VARLEN: tl.constexpr, ORDERED: tl.constexpr,
    PREC: tl.constexpr, SPLIT_F16: tl.constexpr, HI_FIRST: tl.constexpr, ROWS: tl.constexpr,
    V_TILES_ADJACENT: tl.constexpr,
    GRID_3D: tl.constexpr, PARTED: tl.constexpr,
):
    """Scratch inputs ``[HV, NC, ...]`` (head strides ``s_*``); o ``[*, HV, V]`` token-major;
    states fp32. ``ORDERED``: the programs of the r-th sequence slot work on sequence ``order[r]``
    (``longest_first_kernel``), so the longest sequences, the critical path, start first.

    ``PARTED``: this launch walks only the chunks whose slots lie in ``[slot_lo, slot_hi)`` (one
    part of a pipelined call, see ``chunk.py``); a sequence that began in an earlier part resumes
    from ``carry`` (fp32 ``[HV, N, K, V]``, head stride ``s_carry``) and one that goes on in a
    later part leaves its state there. fp32 in, fp32 out: the parts chain bit-exactly.
    ``GRID_3D``: grid ``(HV, NV, N)`` (``(NV, HV, N)`` with ``V_TILES_ADJACENT``) instead of the
    flat ``(N * HV * NV,)``; same dispatch order."""
    NV: tl.constexpr = V // BV
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
    if ORDERED:
        n = tl.load(order + n)
    if IS_VARLEN:
        bos = tl.load(cu_seqlens + n).to(tl.int32)
        eos = tl.load(cu_seqlens + n + 1).to(tl.int32)
        slot0 = bos // C + n
    else:
        bos = n * T
        eos = bos + T
        slot0 = n * NT

    rk = tl.arange(0, K)
    cv = vb * BV + tl.arange(0, BV)
    if ROWS:  # the state is held transposed, S^T [BV, K]
        if STATE_V_FIRST:
            s_off = cv[:, None] * K + rk[None, :]
        else:
            s_off = rk[None, :] * V + cv[:, None]
        c_off = rk[None, :] * V + cv[:, None]
    else:
        if STATE_V_FIRST:
            s_off = cv[None, :] * K + rk[:, None]
        else:
            s_off = rk[:, None] * V + cv[None, :]
        c_off = rk[:, None] * V + cv[None, :]

    nch = tl.cdiv(eos - bos, C)
    c_lo = nch * 0
    c_hi = nch
    starts_here = True
    ends_here = True
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

    if ROWS:
        b_s = tl.zeros([BV, K], dtype=tl.float32)
    else:
        b_s = tl.zeros([K, BV], dtype=tl.float32)
    if HAS_H0:
        if starts_here:
            i0 = _state_slot(h0_indices, n, HAS_H0_IDX)
            if i0 >= 0:
                b_s = tl.load(h0 + (i0 * HV + hv) * K * V + s_off).to(tl.float32)
    if PARTED:
        o_carry = hv.to(tl.int64) * s_carry + n.to(tl.int64) * K * V + c_off
        if slot0 < slot_lo:
            b_s = tl.load(carry + o_carry)

    for c in range(c_lo, c_hi):
        if ROWS:
            b_s = _chunk_step_rows(w, u, qg, kg, aqk, gc, o, s_w, s_u, s_qg, s_kg, s_aqk, s_gc, hv, cv, b_s,
                                   slot0 + c, bos + c * C, eos, HV, K, V, C, HI_FIRST)
        else:
            b_s = _chunk_step(w, u, qg, kg, aqk, gc, o, s_w, s_u, s_qg, s_kg, s_aqk, s_gc, hv, cv, b_s,
                              slot0 + c, bos + c * C, eos, HV, K, V, C, PREC, SPLIT_F16, HI_FIRST)

    if HAS_HT:
        if ends_here:
            i1 = _state_slot(ht_indices, n, HAS_HT_IDX)
            if i1 >= 0:
                tl.store(ht + (i1 * HV + hv) * K * V + s_off, b_s)
    if PARTED:
        if last >= slot_hi:
            tl.store(carry + o_carry, b_s)
