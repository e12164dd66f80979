"""Intra-chunk stage of chunked KDA prefill: everything that is parallel over chunks (two kernels).

What it computes (DESIGN.md section 1), for one chunk of C = 64 tokens of one sequence and one
value head ``hv`` (q/k head ``h = hv // (HV // H)``), after the optional per-token preprocessing
(gate ``kda_gate_tl`` on ``g + dt_bias``, q/k L2 norm, ``beta = sigmoid(beta)``):

    G        = cumsum(g) inside the chunk (per channel, <= 0, non-increasing)
    A_kk     = beta_i * sum_d k_id k_jd e^{G_id - G_jd}       (j <  i)
    A_qk     = scale  * sum_d q_id k_jd e^{G_id - G_jd}       (j <= i)
    Tinv     = (I + A_kk)^-1
    w        = Tinv (beta k * e^G)            -> w   [C, K]  (INTER dtype)
    u        = Tinv (beta v)                  -> u   [C, V]  fp32
    qg       = scale q * e^G                  -> qg  [C, K]  (INTER dtype)
    kg       = k * e^{G_C - G}                -> kg  [C, K]  (INTER dtype)
    gC       = e^{G_C}                        -> gc  [K]     fp32
    A_qk                                      -> aqk [C, C]  (INTER dtype)

Only these go through HBM to the sequential stage (``chunk_state.py``), plus one fp32 ``[C, C]``
tile per chunk between the two kernels here. Rows past the end of a sequence are loaded as
``q = k = v = beta = 0, g = 0``: they change neither the state nor any real output.

Kernels (the split keeps each program's working set to a few ``[16, BK]`` / ``[64, BK]`` tiles;
a single fused kernel spilled and ran at one CTA per SM, see docs/prefill.md):

1. ``chunk_scores_kernel``, grid ``(NC, HV, NS)``: one program per row block ``I`` (16 rows) of a
   chunk. Writes the rows of block ``I`` of ``A_qk`` (``aqk``) and of ``akd``: ``A_kk`` left of
   the diagonal block, and in the diagonal block the inverse ``D_I = (I + A_kk[I, I])^-1``
   (forward substitution, 16 rank-1 steps).
2. ``chunk_solve_kernel``, grid ``(NC, HV)``: reads ``akd``, forms ``Tinv`` with
   ``N = D * A_off`` (strictly block-lower, ``N^NS = 0``): ``Tinv = (I - N + N^2 - N^3) D``
   (Horner, tensor cores), then w, u, qg, kg, gC over K / V slices.

Chunk slots: grid axis 0 runs over ``NC`` chunk *slots*, a bound that depends only on shapes.
Fixed length: slot ``s = b * NT + c`` (``NT = cdiv(T, C)``). Varlen: sequence ``n`` owns the
slots ``cu[n] // C + n + c`` for its chunks ``c``; these never collide and stay below
``T // C + N`` (see ``chunk.py``). A program finds its sequence by a binary search over
``cu_seqlens`` (``f(n) = cu[n] // C + n`` is non-decreasing) and exits when its slot is a gap.
No host synchronization, no metadata tensors.

Numerics (overflow-safe for unbounded gates: every exponential evaluated has an argument <= 0):

* Off-diagonal blocks of row block I (columns ``j < r``, ``r`` the first row of I) factor
  through row r: ``e^{G_i - G_j} = e^{G_i - G_r} * e^{G_r - G_j}``, both exponents <= 0. The left
  exponent is the block-local cumsum ``sum_{r < t <= i} g_t``; the right one is the reverse cumsum
  ``sum_{j <= t <= r} g_t`` minus ``g_j``: its absolute error is at most ~ulp(|g_j|) (2.4e-4 for
  ``|g| <= 3e3``), a relative error of the factor below the fp16 operand rounding (4.9e-4), and
  neither exponent is a difference of chunk cumsums, so both keep their precision when G reaches
  ~6e4. One tensor-core dot ``[16, BK] x [BK, C]`` per K slice.
* Diagonal blocks (i >= j inside one block of 16) use a binary hierarchy instead of pairwise
  exponentials: at level ``l`` in (8, 4, 2, 1) the pairs with ``i`` in the lower half and ``j``
  in the upper half of a group of ``2l`` rows factor through the group's middle row ``a``:
  ``e^{G_i - G_a} * e^{G_a - G_j}``, both <= 0. Every pair i > j is covered by exactly one level
  (the highest bit where i and j differ); i == j contributes ``q_i . k_i``. One exponential per
  element per level (``e^{-|G_t - G_a|}`` serves as left factor for rows below the anchor and
  right factor above it), and the sums run on tensor cores.
* ``w, qg`` use ``e^{G}``; ``kg`` uses ``e^{G_C - G} = e^{R - g}`` with ``R`` the reverse cumsum
  (``R_i - g_i <= 0`` exactly in fp32); ``gC = e^{sum g}``. All <= 0.
* Precision: score dots take ``DOT_DT`` operands (fp16 by default: every operand is ``|x|`` times a
  factor <= 1, so it fits fp16 whenever |q|, |k| < 65504; 11-bit significand like tf32) with fp32
  accumulation; ``akd``, the inverse, w and u are fp32 with ``INV_PREC`` dots (tf32 by default).
  Precomputed gates must be log decays (``g <= 0``), as the API documents.
"""

from __future__ import annotations

import triton
import triton.language as tl

from kimiops.kda.gate import kda_gate_tl, l2_inv_norm_tl, sigmoid_tl

# Tuning choices of the two kernels; benchmarks/bench_kda_prefill.py sweeps the candidates
# (--sweep) and times variants per stage (--ablate). BK: K-slice width; BVI: V-slice width for u.
INTRA_CONFIG = {"BK_S": 32, "warps_s": 4, "BK": 32, "BVI": 32, "num_warps": 4}
INTRA_CANDIDATES = [
    {"BK_S": 32, "warps_s": 4, "BK": 32, "BVI": 32, "num_warps": 4},
    {"BK_S": 64, "warps_s": 4, "BK": 32, "BVI": 32, "num_warps": 4},
    {"BK_S": 32, "warps_s": 2, "BK": 32, "BVI": 32, "num_warps": 4},
    {"BK_S": 32, "warps_s": 4, "BK": 16, "BVI": 32, "num_warps": 4},
    {"BK_S": 32, "warps_s": 4, "BK": 64, "BVI": 64, "num_warps": 8},
]

GATE_NONE, GATE_SOFTPLUS, GATE_LOWER_BOUND = 0, 1, 2


@triton.jit
def _locate_chunk(pid, cu_seqlens, T, N, C: tl.constexpr, NT, IS_VARLEN: tl.constexpr, LOG_N: tl.constexpr):
    """(first token, number of valid rows) of chunk slot ``pid``; rows <= 0 means an idle slot."""
    if IS_VARLEN:
        # largest n in [0, N) with cu[n] // C + n <= pid (f is non-decreasing, f(0) = 0)
        lo = pid * 0
        hi = lo + N
        for _ in tl.static_range(LOG_N):
            active = hi - lo > 1
            mid = (lo + hi) // 2
            f = tl.load(cu_seqlens + mid).to(tl.int32) // C + mid
            lo = tl.where(active & (f <= pid), mid, lo)
            hi = tl.where(active & (f > pid), mid, hi)
        bos = tl.load(cu_seqlens + lo).to(tl.int32)
        eos = tl.load(cu_seqlens + lo + 1).to(tl.int32)
        c = pid - (bos // C + lo)
        start = bos + c * C
        length = tl.minimum(eos - start, C)
    else:
        b = pid // NT
        c = pid % NT
        start = b * T + c * C
        length = tl.minimum(T - c * C, C)
    return start, length


@triton.jit
def _load_rows(x, tok, rmask, head, NHEAD: tl.constexpr, D: tl.constexpr, cols):
    """fp32 tile ``x[tok, head, cols]`` of a token-major ``[*, NHEAD, D]`` tensor (0 where masked)."""
    ptr = x + (tok[:, None] * NHEAD + head) * D + cols[None, :]
    return tl.load(ptr, mask=rmask[:, None], other=0.0).to(tl.float32)


@triton.jit
def _load_gate(g, dt_bias, tok, rmask, hv, cols, b_A, lower_bound, HV: tl.constexpr, K: tl.constexpr,
               GATE: tl.constexpr, HAS_A: tl.constexpr, HAS_DT_BIAS: tl.constexpr):
    """Log decay ``[rows, BK]`` fp32 (``kda_gate_tl`` applied for the in-kernel gates; 0 where masked)."""
    b_g = _load_rows(g, tok, rmask, hv, HV, K, cols)
    if GATE != 0:
        if HAS_DT_BIAS:
            b_g = b_g + tl.load(dt_bias + hv * K + cols).to(tl.float32)[None, :]
        b_g = tl.where(rmask[:, None], kda_gate_tl(b_g, b_A, lower_bound, HAS_A, GATE == 2), 0.0)
    return b_g


@triton.jit
def _load_beta(beta, tok, rmask, hv, HV: tl.constexpr, USE_BETA_SIGMOID: tl.constexpr):
    """beta of the rows, fp32, sigmoid applied when asked; 0 on masked rows."""
    b_beta = tl.load(beta + tok * HV + hv, mask=rmask, other=0.0).to(tl.float32)
    if USE_BETA_SIGMOID:
        b_beta = tl.where(rmask, sigmoid_tl(b_beta), 0.0)
    return b_beta


@triton.jit
def _decay_scale(A_log, hv, HAS_A: tl.constexpr):
    """``exp(A_log[hv])`` (the softplus / lower-bound gate's scale), 1 without A_log."""
    b_A = 1.0
    if HAS_A:
        b_A = tl.exp(tl.load(A_log + hv).to(tl.float32))
    return b_A


@triton.jit
def _diag_level(lx, k3, q3, dg_kk, dg_qk, NS: tl.constexpr, BC: tl.constexpr, BK: tl.constexpr,
                ELL: tl.constexpr, DOT_DT: tl.constexpr):
    """Level ``ELL`` of the diagonal-block hierarchy: pairs (i in the lower half, j in the upper
    half) of each group of ``2*ELL`` rows, factored through the group's middle row ``a``:
    ``e^{G_i - G_a} e^{G_a - G_j}``; one ``e^{-|G_t - G_a|}`` per element serves both sides."""
    GRP: tl.constexpr = 2 * ELL
    lx4 = tl.reshape(lx, (NS, BC // GRP, GRP, BK))
    pos4 = tl.arange(0, GRP)[None, None, :, None]
    anchor = tl.sum(tl.where(pos4 == ELL, lx4, 0.0), axis=2, keep_dims=True)
    f3 = tl.reshape(tl.exp(-tl.abs(lx4 - anchor)), (NS, BC, BK))
    loc = tl.arange(0, BC)[None, :, None]
    lower = (loc % GRP) >= ELL
    kf = k3 * f3
    lf_k = tl.where(lower, kf, 0.0).to(DOT_DT)
    lf_q = tl.where(lower, q3 * f3, 0.0).to(DOT_DT)
    rt = tl.permute(tl.where(lower, 0.0, kf).to(DOT_DT), (0, 2, 1))  # [NS, BK, BC]
    ii = tl.arange(0, BC)[None, :, None]
    jj = tl.arange(0, BC)[None, None, :]
    same = (ii // GRP) == (jj // GRP)
    dg_kk += tl.where(same, tl.dot(lf_k, rt), 0.0)
    dg_qk += tl.where(same, tl.dot(lf_q, rt), 0.0)
    return dg_kk, dg_qk


@triton.jit
def _forward_substitution(a, BC: tl.constexpr):
    """``(I + a)^-1`` of a strictly lower-triangular fp32 ``[BC, BC]`` tile, 16 rank-1 steps."""
    ii = tl.arange(0, BC)[:, None]
    jj = tl.arange(0, BC)[None, :]
    d = tl.where(ii == jj, 1.0, 0.0)
    for j in tl.static_range(BC):
        col_j = tl.sum(tl.where(jj == j, a, 0.0), axis=1)     # a[:, j]
        row_j = tl.sum(tl.where(ii == j, d, 0.0), axis=0)     # d[j, :] (final: rows < j done)
        d = d - col_j[:, None] * row_j[None, :]
    return d


@triton.jit
def _embed_block(x, blk, NS: tl.constexpr, BC: tl.constexpr):
    """``[BC, BC]`` tile -> ``[BC, NS * BC]`` with ``x`` at column block ``blk``, zeros elsewhere."""
    cb = tl.arange(0, NS)[None, :, None]
    return tl.reshape(tl.where(cb == blk, x[:, None, :], 0.0), (BC, NS * BC))


@triton.jit
def chunk_scores_kernel(
    q, k, g, beta, A_log, dt_bias, cu_seqlens, aqk_out, akd_out, s_aqk, s_akd,
    scale, lower_bound, T, N, NT,
    H: tl.constexpr, HV: tl.constexpr, K: tl.constexpr, C: tl.constexpr, BC: tl.constexpr, BK: tl.constexpr,
    GATE: tl.constexpr, HAS_A: tl.constexpr, HAS_DT_BIAS: tl.constexpr,
    USE_L2NORM: tl.constexpr, USE_BETA_SIGMOID: tl.constexpr, IS_VARLEN: tl.constexpr, LOG_N: tl.constexpr,
    DOT_DT: tl.constexpr,
):
    """Rows of block ``I = program_id(2)`` of A_qk and of akd (A_kk left of the diagonal block,
    ``(I + A_kk[I, I])^-1`` in it); outputs ``[HV, NC, C, C]`` with head strides ``s_*``."""
    pid = tl.program_id(0)
    hv = tl.program_id(1)
    blk = tl.program_id(2)
    h = hv // (HV // H)
    NS: tl.constexpr = C // BC
    LOG_BC: tl.constexpr = 4  # BC == 16

    start, length = _locate_chunk(pid, cu_seqlens, T, N, C, NT, IS_VARLEN, LOG_N)
    if length <= 0:
        return
    r0 = blk * BC
    rows = tl.arange(0, C)                        # whole chunk: right operands (j < r0)
    cmask = rows < tl.minimum(length, r0)
    ctok = (start + rows).to(tl.int64)
    upto = (rows <= r0)[:, None]
    before = (rows < r0)[:, None]
    brow = r0 + tl.arange(0, BC)                  # rows of block I
    bmask = brow < length
    btok = (start + brow).to(tl.int64)
    b_beta = _load_beta(beta, btok, bmask, hv, HV, USE_BETA_SIGMOID)
    b_A = _decay_scale(A_log, hv, HAS_A)
    # g of row r0 is needed in the reverse cumsum: load the chunk's g through row r0
    gmask = rows < tl.minimum(length, r0 + 1)

    loc = tl.arange(0, BC)[:, None]
    ii = tl.arange(0, BC)[None, :, None]
    jj = tl.arange(0, BC)[None, None, :]
    acc_kk = tl.zeros([BC, C], dtype=tl.float32)
    acc_qk = tl.zeros([BC, C], dtype=tl.float32)
    dg_kk = tl.zeros([1, BC, BC], dtype=tl.float32)
    dg_qk = tl.zeros([1, BC, BC], dtype=tl.float32)
    ssq_kc = tl.zeros([C], dtype=tl.float32)
    ssq_kb = tl.zeros([BC], dtype=tl.float32)
    ssq_qb = tl.zeros([BC], dtype=tl.float32)

    for kb in range(0, K, BK):
        cols = kb + tl.arange(0, BK)
        k_c = _load_rows(k, ctok, cmask, h, H, K, cols)
        g_c = _load_gate(g, dt_bias, ctok, gmask, hv, cols, b_A, lower_bound, HV, K, GATE, HAS_A, HAS_DT_BIAS)
        q_b = _load_rows(q, btok, bmask, h, H, K, cols)
        k_b = _load_rows(k, btok, bmask, h, H, K, cols)
        g_b = _load_gate(g, dt_bias, btok, bmask, hv, cols, b_A, lower_bound, HV, K, GATE, HAS_A, HAS_DT_BIAS)
        if USE_L2NORM:
            ssq_kc += tl.sum(k_c * k_c, axis=1)
            ssq_kb += tl.sum(k_b * k_b, axis=1)
            ssq_qb += tl.sum(q_b * q_b, axis=1)
        # right: k_j e^{G_r - G_j}, exponent sum_{j < t <= r} g_t = (sum_{j <= t <= r} g_t) - g_j
        rev = tl.cumsum(tl.where(upto, g_c, 0.0), axis=0, reverse=True)
        right = tl.where(before, k_c * tl.exp(tl.where(before, rev - g_c, 0.0)), 0.0).to(DOT_DT)
        right_t = tl.trans(right)                                 # [BK, C]
        # left: x_i e^{G_i - G_r}, the block-local cumsum without row r
        lx = tl.cumsum(tl.where(loc == 0, 0.0, g_b), axis=0)
        e_left = tl.exp(lx)
        acc_kk = tl.dot((k_b * e_left).to(DOT_DT), right_t, acc_kk)
        acc_qk = tl.dot((q_b * e_left).to(DOT_DT), right_t, acc_qk)
        # diagonal block: levels l = 8, 4, 2, 1
        lx3 = tl.reshape(lx, (1, BC, BK))
        k3 = tl.reshape(k_b, (1, BC, BK))
        q3 = tl.reshape(q_b, (1, BC, BK))
        for lvl in tl.static_range(LOG_BC):
            dg_kk, dg_qk = _diag_level(lx3, k3, q3, dg_kk, dg_qk, 1, BC, BK, BC // (2 << lvl), DOT_DT)
        dg_qk += tl.where(ii == jj, tl.sum(q3 * k3, axis=2)[:, :, None], 0.0)

    if USE_L2NORM:
        rk_c = l2_inv_norm_tl(ssq_kc)
        rk_b = l2_inv_norm_tl(ssq_kb)
        rq_b = l2_inv_norm_tl(ssq_qb)
    else:
        rk_c = tl.full([C], 1.0, tl.float32)
        rk_b = tl.full([BC], 1.0, tl.float32)
        rq_b = tl.full([BC], 1.0, tl.float32)
    row_kk = b_beta * rk_b
    row_qk = scale * rq_b
    d_kk = tl.reshape(dg_kk, (BC, BC)) * row_kk[:, None] * rk_b[None, :]
    d_qk = tl.reshape(dg_qk, (BC, BC)) * row_qk[:, None] * rk_b[None, :]
    a_qk = acc_qk * row_qk[:, None] * rk_c[None, :] + _embed_block(d_qk, blk, NS, BC)
    a_kd = acc_kk * row_kk[:, None] * rk_c[None, :] + _embed_block(_forward_substitution(d_kk, BC), blk, NS, BC)

    # every row of the slot is written (rows past the sequence hold zeros / identity rows)
    o_rc = pid.to(tl.int64) * C * C + brow[:, None] * C + rows[None, :]
    tl.store(aqk_out + hv.to(tl.int64) * s_aqk + o_rc, a_qk.to(aqk_out.dtype.element_ty))
    tl.store(akd_out + hv.to(tl.int64) * s_akd + o_rc, a_kd)


@triton.jit
def chunk_solve_kernel(
    q, k, v, g, beta, A_log, dt_bias, cu_seqlens, akd,
    w_out, u_out, qg_out, kg_out, gc_out,
    s_akd, s_w, s_u, s_qg, s_kg, s_gc,
    scale, lower_bound, T, N, NT,
    H: tl.constexpr, HV: tl.constexpr, K: tl.constexpr, V: tl.constexpr,
    C: tl.constexpr, BC: tl.constexpr, BK: tl.constexpr, BVI: tl.constexpr,
    GATE: tl.constexpr, HAS_A: tl.constexpr, HAS_DT_BIAS: tl.constexpr,
    USE_L2NORM: tl.constexpr, USE_BETA_SIGMOID: tl.constexpr,
    IS_VARLEN: tl.constexpr, LOG_N: tl.constexpr, INV_PREC: tl.constexpr,
):
    """One (chunk slot, value head): Tinv from ``akd``, then w, u, qg, kg, gC (scratch
    ``[HV, NC, ...]`` with head strides ``s_*``)."""
    pid = tl.program_id(0)
    hv = tl.program_id(1)
    h = hv // (HV // H)
    hv64 = hv.to(tl.int64)

    start, length = _locate_chunk(pid, cu_seqlens, T, N, C, NT, IS_VARLEN, LOG_N)
    if length <= 0:
        return
    rr = tl.arange(0, C)
    rmask = rr < length
    tok = (start + rr).to(tl.int64)
    slot = pid.to(tl.int64)
    b_beta = _load_beta(beta, tok, rmask, hv, HV, USE_BETA_SIGMOID)
    b_A = _decay_scale(A_log, hv, HAS_A)

    # ---------------------------------------------------------------- Tinv = (I + A_kk)^-1
    b_akd = tl.load(akd + hv64 * s_akd + slot * C * C + rr[:, None] * C + rr[None, :])
    same_blk = (rr[:, None] // BC) == (rr[None, :] // BC)
    dblk = tl.where(same_blk, b_akd, 0.0)
    a_off = tl.where(same_blk, 0.0, b_akd)
    eye = tl.where(rr[:, None] == rr[None, :], 1.0, 0.0)
    n_mat = tl.dot(dblk, a_off, input_precision=INV_PREC)
    p_mat = eye - n_mat
    for _ in tl.static_range(C // BC - 2):
        p_mat = eye - tl.dot(n_mat, p_mat, input_precision=INV_PREC)
    t_inv = tl.dot(p_mat, dblk, input_precision=INV_PREC)       # [C, C] fp32

    # ---------------------------------------------------------------- L2 norms of the chunk's rows
    rq = tl.full([C], 1.0, tl.float32)
    rk = tl.full([C], 1.0, tl.float32)
    if USE_L2NORM:
        ssq_q = tl.zeros([C], dtype=tl.float32)
        ssq_k = tl.zeros([C], dtype=tl.float32)
        for kb in range(0, K, BK):
            cols = kb + tl.arange(0, BK)
            b_q = _load_rows(q, tok, rmask, h, H, K, cols)
            b_k = _load_rows(k, tok, rmask, h, H, K, cols)
            ssq_q += tl.sum(b_q * b_q, axis=1)
            ssq_k += tl.sum(b_k * b_k, axis=1)
        rq = l2_inv_norm_tl(ssq_q)
        rk = l2_inv_norm_tl(ssq_k)

    # ---------------------------------------------------------------- w, qg, kg, gc per K slice
    for kb in range(0, K, BK):
        cols = kb + tl.arange(0, BK)
        b_q = _load_rows(q, tok, rmask, h, H, K, cols) * rq[:, None]
        b_k = _load_rows(k, tok, rmask, h, H, K, cols) * rk[:, None]
        b_g = _load_gate(g, dt_bias, tok, rmask, hv, cols, b_A, lower_bound, HV, K, GATE, HAS_A, HAS_DT_BIAS)
        e_g = tl.exp(tl.cumsum(b_g, axis=0))
        e_kg = tl.exp(tl.cumsum(b_g, axis=0, reverse=True) - b_g)
        o_ck = slot * C * K + rr[:, None] * K + cols[None, :]
        b_w = tl.dot(t_inv, b_k * e_g * b_beta[:, None], input_precision=INV_PREC)
        tl.store(w_out + hv64 * s_w + o_ck, b_w.to(w_out.dtype.element_ty))
        tl.store(qg_out + hv64 * s_qg + o_ck, (b_q * e_g * scale).to(qg_out.dtype.element_ty))
        tl.store(kg_out + hv64 * s_kg + o_ck, (b_k * e_kg).to(kg_out.dtype.element_ty))
        tl.store(gc_out + hv64 * s_gc + slot * K + cols, tl.exp(tl.sum(b_g, axis=0)))

    # ---------------------------------------------------------------- u = Tinv (beta v)
    for vb in range(0, V, BVI):
        vcols = vb + tl.arange(0, BVI)
        b_v = _load_rows(v, tok, rmask, hv, HV, V, vcols)
        b_u = tl.dot(t_inv, b_v * b_beta[:, None], input_precision=INV_PREC)
        tl.store(u_out + hv64 * s_u + slot * C * V + rr[:, None] * V + vcols[None, :], b_u)
