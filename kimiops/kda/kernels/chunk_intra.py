"""Intra-chunk stage of chunked KDA prefill: everything that is parallel over chunks, fused.

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

Only these go through HBM; the sequential stage (``chunk_state.py``) reads them once per chunk.
Rows past the end of a sequence are loaded as ``q = k = v = beta = 0, g = 0``: they change
neither the state nor any real output.

Grid: ``(NC, HV)`` with ``NC`` the number of chunk *slots*, a bound that depends only on shapes.
Fixed length: slot ``s = b * NT + c`` (``NT = cdiv(T, C)``). Varlen: sequence ``n`` owns the
slots ``cu[n] // C + n + c`` for its chunks ``c``; these never collide and stay below
``T // C + N`` (see ``chunk.py``). A program finds its sequence by a binary search over
``cu_seqlens`` (``f(n) = cu[n] // C + n`` is non-decreasing) and exits when its slot is a gap.
No host synchronization, no metadata tensors.

Numerics (overflow-safe for unbounded gates: every exponential evaluated has an argument <= 0):
the chunk is split into NS = 4 sub-chunks of BC = 16 rows.

* Off-diagonal sub-blocks (row block I > column block J) factor as
  ``e^{G_i - G_j} = e^{G_i - G_rI} * e^{G_rI - G_eJ} * e^{G_eJ - G_j}`` with ``rI`` the first row
  of block I and ``eJ`` the last row of block J (``j <= eJ < rI <= i``): all three exponents are
  <= 0. The first factor goes on the left operand, the product of the other two on a right operand
  built per row block I (``[NS, C, BK]``), so one batched tensor-core dot
  ``[NS, BC, BK] x [NS, BK, C]`` gives all off-diagonal blocks. The exponents are block-local sums
  of g (not differences of the chunk cumsum), so they keep their precision when G is ~6e4.
* Diagonal sub-blocks (i >= j inside one block of 16) use a binary hierarchy instead of pairwise
  exponentials: at level ``l`` in (8, 4, 2, 1) the pairs with ``i`` in the lower half and ``j``
  in the upper half of a group of ``2l`` rows factor through the group's middle row ``a``:
  ``e^{G_i - G_a} * e^{G_a - G_j}``, both <= 0. Every pair i > j is covered by exactly one level
  (the highest bit where i and j differ); i == j contributes ``q_i . k_i``. One exponential per
  element per level (``e^{-|G_t - G_a|}`` serves as left factor for rows below the anchor and
  right factor above it), i.e. 4 per element instead of 16 for pairwise, and the sums run on
  tensor cores (batched ``[NS, BC, BK] x [NS, BK, BC]``).
* ``(I + A_kk)^-1``: the 16x16 diagonal blocks are inverted by forward substitution (16 rank-1
  steps, CUDA cores), then with ``D`` = block-diagonal inverse and ``N = D * A_off`` (strictly
  block-lower, ``N^NS = 0``): ``Tinv = (I - N + N^2 - N^3) D`` (Horner, tensor cores).
* ``w, qg`` use ``e^{G}``; ``kg`` uses ``e^{G_C - G} = e^{R - g}`` with ``R`` the reverse cumsum
  (``R_i - g_i <= 0`` exactly in fp32); ``gC = e^{sum g}``. All <= 0.
* Precision: score dots take ``DOT_DT`` operands (fp16 by default: every operand is ``|x|`` times a
  factor <= 1, so it fits fp16 whenever |q|, |k| < 65504; 11-bit significand like tf32) with fp32
  accumulation; the inverse, w and u use fp32 operands with ``INV_PREC`` (tf32 by default).
  Precomputed gates must be log decays (``g <= 0``), as the API documents.

Notes (measured on the H200, ``python benchmarks/bench_kda_prefill.py --ablate``; CUDA-graph medians
of this stage alone at B1 T8192 H=HV=32 K=V=128 bf16, precomputed g; 2026-11-29):

* This kernel (BK=16, 4 warps, loops software-pipelined 2 deep): 1.213 ms (1.241 with unpipelined
  loops), i.e. ~75 us per (chunk, head) program at 2 CTAs per SM; 1.102 ms with registers capped at
  168 (3 CTAs per SM, a few spills), the default since; FLA's whole intra part is ~0.6 ms.
  Where the time goes (``--ablate intra``; the ``ABL`` bits skip parts, timing only): loads and
  stores alone 0.075 ms (the memory floor is not the issue); pass 1 alone 0.610; pass 2 (w, qg,
  kg) 0.35; the inverse 0.09; u 0.08; skipping the off-diagonal blocks saves 0.22 (skipping the
  diagonal hierarchy makes it *slower*, 1.60: register allocation). Nsight Compute on the default
  kernel: 255 registers and 49 KB of shared memory per CTA cap it at 2 CTAs (8 warps) per SM
  (12.5% occupancy); 0.30 instructions issued per cycle per scheduler; the top stall is the short
  scoreboard (shared memory, i.e. the layout conversions and dot operand staging: 35%), with the
  L1/shared pipe 62% busy. ``benchmarks/results/logs_h200_20261129b/ncu_chunk_intra.txt``.
* Tried and slower: a full-tile variant (whole chunk in registers; 3.75-5.09 ms, spills), fully
  unrolled K loops (2.11-2.16 ms), a split into a per-16-row-block score kernel plus a solve
  kernel (1.05 + 0.52 ms). Numbers and analysis in docs/prefill.md.
* Conclusion for the next design: fewer shared-memory round trips per chunk (3-D reshapes,
  permutes and small batched dots each stage data through shared memory) and a register budget
  that admits 4+ CTAs per SM; pass 2's cumsums and the w product are the second target.
"""

from __future__ import annotations

import triton
import triton.language as tl

from kimiops.kda.gate import kda_gate_tl, l2_inv_norm_tl, sigmoid_tl

# Tuning choices of this kernel; benchmarks/bench_kda_prefill.py sweeps candidates (--sweep) and
# prints the winner, --ablate times variants per stage. BK: K-slice width; BVI: V-slice width for u;
# loop_stages: software-pipelining depth of the K/V loops; maxnreg: register cap per thread.
# Measured on the H200 (CUDA-graph medians of this stage alone, B1 T8192 H32, precomputed g,
# 2026-11-29): BK16/BVI32/4 warps 1.243 ms (the sweep winner), with loop_stages 2 1.213 ms
# (prefill_ablate_intra_parts.log); BK16/BVI64/8 warps and BK32/BVI64/8 warps slower; 2 warps 1.743,
# BK32/4 warps 1.416 (prefill_ablate_fused_state_tiling.log), logs under
# benchmarks/results/logs_h200_20261129b/. Capping registers at 168 (3 CTAs per SM instead of 2,
# 22 spilled registers): 1.102 ms; at 128 (4 CTAs, 82 spills) 1.217; 168 with loop_stages 1 / 3 or
# BVI 16 / 64: 1.11-1.20 (logs_h200_20261129c/prefill_ablate_maxnreg*.log).
INTRA_CONFIG = {"BK": 16, "BVI": 32, "num_warps": 8, "num_stages": 1, "loop_stages": 2}
INTRA_CANDIDATES = [
    {"BK": 16, "BVI": 32, "num_warps": 4, "num_stages": 1, "loop_stages": 2, "maxnreg": 168},
    {"BK": 16, "BVI": 32, "num_warps": 4, "num_stages": 1, "loop_stages": 2},
    {"BK": 16, "BVI": 32, "num_warps": 4, "num_stages": 1, "loop_stages": 1},
    {"BK": 16, "BVI": 64, "num_warps": 8, "num_stages": 1, "loop_stages": 2},
    {"BK": 32, "BVI": 64, "num_warps": 8, "num_stages": 1, "loop_stages": 2},
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
def _load_gated(q, k, g, dt_bias, tok, rmask, h, hv, cols, b_A, lower_bound,
                H: tl.constexpr, HV: tl.constexpr, K: tl.constexpr,
                GATE: tl.constexpr, HAS_A: tl.constexpr, HAS_DT_BIAS: tl.constexpr):
    """fp32 tiles q, k ``[C, BK]`` and log decay g ``[C, BK]`` (0 on rows past the sequence)."""
    m = rmask[:, None]
    b_q = tl.load(q + (tok[:, None] * H + h) * K + cols[None, :], mask=m, other=0.0).to(tl.float32)
    b_k = tl.load(k + (tok[:, None] * H + h) * K + cols[None, :], mask=m, other=0.0).to(tl.float32)
    b_g = tl.load(g + (tok[:, None] * HV + hv) * K + cols[None, :], mask=m, other=0.0).to(tl.float32)
    if GATE != 0:
        if HAS_DT_BIAS:
            b_g = b_g + tl.load(dt_bias + hv * K + cols).to(tl.float32)[None, :]
        b_g = kda_gate_tl(b_g, b_A, lower_bound, HAS_A, GATE == 2)
        b_g = tl.where(m, b_g, 0.0)
    return b_q, b_k, b_g


@triton.jit
def _level(xq, xk, e, later, acc_kk, acc_qk, same_grp, DOT_DT: tl.constexpr, MASKED: tl.constexpr):
    """One level of the factoring hierarchy on a K slice. ``e [C, BK]`` (<= 0) is ``G_t - G_a`` on
    the later half of each group and ``G_a - G_t`` on the earlier half (``a``: the group's anchor);
    ``later [C, 1]``. Adds ``sum_d x_i k_j e^{G_i - G_j}`` for i in the later, j in the earlier half
    of the same group (``same_grp [C, C]``; a single group needs no mask)."""
    f = tl.exp(e)
    kf = xk * f
    lk = tl.where(later, kf, 0.0).to(DOT_DT)
    lq = tl.where(later, xq * f, 0.0).to(DOT_DT)
    rt = tl.trans(tl.where(later, 0.0, kf).to(DOT_DT))  # [BK, C]
    if MASKED:
        acc_kk += tl.where(same_grp, tl.dot(lk, rt), 0.0)
        acc_qk += tl.where(same_grp, tl.dot(lq, rt), 0.0)
    else:
        acc_kk = tl.dot(lk, rt, acc_kk)
        acc_qk = tl.dot(lq, rt, acc_qk)
    return acc_kk, acc_qk


@triton.jit
def _block_level(xq, xk, lx, acc_kk, acc_qk, C: tl.constexpr, BC: tl.constexpr, BK: tl.constexpr,
                 ELL: tl.constexpr, DOT_DT: tl.constexpr):
    """Level ``ELL`` (8, 4, 2 or 1) inside the BC-row blocks: groups of ``2 * ELL`` rows, anchored at
    the first row of the group's later half; ``lx [C // BC, BC, BK]`` are the block-local sums."""
    GRP: tl.constexpr = 2 * ELL
    lx4 = tl.reshape(lx, (C // BC, BC // GRP, GRP, BK))
    pos4 = tl.arange(0, GRP)[None, None, :, None]
    anchor = tl.sum(tl.where(pos4 == ELL, lx4, 0.0), axis=2, keep_dims=True)
    e = tl.reshape(-tl.abs(lx4 - anchor), (C, BK))
    rows = tl.arange(0, C)
    grp = rows // GRP
    return _level(xq, xk, e, ((rows % GRP) >= ELL)[:, None], acc_kk, acc_qk,
                  grp[:, None] == grp[None, :], DOT_DT, True)


@triton.jit
def _score_slice(q, k, g, dt_bias, tok, rmask, h, hv, kb, b_A, lower_bound, acc_kk, acc_qk, diag_qk,
                 ssq_q, ssq_k, H: tl.constexpr, HV: tl.constexpr, K: tl.constexpr, C: tl.constexpr,
                 BC: tl.constexpr, BK: tl.constexpr, GATE: tl.constexpr, HAS_A: tl.constexpr,
                 HAS_DT_BIAS: tl.constexpr, USE_L2NORM: tl.constexpr, DOT_DT: tl.constexpr, ABL: tl.constexpr):
    """Pass 1 on the K slice ``[kb, kb + BK)``: adds the slice's part of A_kk and A_qk (strictly
    lower parts, all six levels), of the diagonal ``q_i . k_i`` and of the sums of squares."""
    NS: tl.constexpr = C // BC
    cols = kb + tl.arange(0, BK)
    b_q, b_k, b_g = _load_gated(q, k, g, dt_bias, tok, rmask, h, hv, cols, b_A, lower_bound,
                                H, HV, K, GATE, HAS_A, HAS_DT_BIAS)
    if USE_L2NORM:
        ssq_q += tl.sum(b_q * b_q, axis=1)
        ssq_k += tl.sum(b_k * b_k, axis=1)
    diag_qk += tl.sum(b_q * b_k, axis=1)
    rows = tl.arange(0, C)
    # block-local sums (BC-row blocks): lx_t = sum of g over (first row of t's block, t]
    loc = tl.arange(0, BC)[None, :, None]
    g3 = tl.reshape(b_g, (NS, BC, BK))
    lx = tl.cumsum(tl.where(loc == 0, 0.0, g3), axis=1)                      # [NS, BC, BK]
    if (ABL & 1) == 0:
        blk = tl.arange(0, NS)[:, None, None]
        g_first = tl.sum(tl.where(loc == 0, g3, 0.0), axis=1, keep_dims=True)  # [NS, 1, BK]
        lx_last = tl.sum(tl.where(loc == BC - 1, lx, 0.0), axis=1, keep_dims=True)
        head = g_first + lx            # sum over [block start, t]      (G_t - G_{end of previous block})
        tail = lx_last - lx            # sum over (t, block end]        (G_{block end} - G_t)
        total = g_first + lx_last      # sum over the block
        # level 32: anchor row 31 (end of block 1)
        t1 = tl.sum(tl.where(blk == 1, total, 0.0), axis=0, keep_dims=True)
        t2 = tl.sum(tl.where(blk == 2, total, 0.0), axis=0, keep_dims=True)
        e32 = tl.where(blk >= 2, head + tl.where(blk == 3, t2, 0.0), tail + tl.where(blk == 0, t1, 0.0))
        acc_kk, acc_qk = _level(b_q, b_k, tl.reshape(e32, (C, BK)), (rows >= 2 * BC)[:, None],
                                acc_kk, acc_qk, acc_kk, DOT_DT, False)
        # level 16: anchors at the ends of blocks 0 and 2
        e16 = tl.where(blk % 2 == 1, head, tail)
        grp16 = rows // (2 * BC)
        acc_kk, acc_qk = _level(b_q, b_k, tl.reshape(e16, (C, BK)), ((rows // BC) % 2 == 1)[:, None],
                                acc_kk, acc_qk, grp16[:, None] == grp16[None, :], DOT_DT, True)
    if (ABL & 2) == 0:
        # levels 8, 4, 2, 1 inside each block: anchor = first row of the group's later half
        for lvl in tl.static_range(4):
            acc_kk, acc_qk = _block_level(b_q, b_k, lx, acc_kk, acc_qk, C, BC, BK, BC // (2 << lvl), DOT_DT)
    return acc_kk, acc_qk, diag_qk, ssq_q, ssq_k


@triton.jit
def _unit_lower_inverse(a, C: tl.constexpr, BC: tl.constexpr, INV_PREC: tl.constexpr):
    """``(I + a)^-1`` for a strictly lower ``a [C, C]`` (fp32). The BC x BC diagonal blocks ``D`` are
    inverted by column elimination (``D <- (I - a_j e_j^T) D`` for j = 0..BC-1, all blocks at once,
    CUDA cores); with ``N = D a_off`` (strictly block-lower, ``N^(C/BC) = 0``) the inverse is
    ``(I - N + N^2 - ...) D`` (Horner, tensor cores with ``INV_PREC``)."""
    rr = tl.arange(0, C)
    same = (rr[:, None] // BC) == (rr[None, :] // BC)
    eye = tl.where(rr[:, None] == rr[None, :], 1.0, 0.0)
    a_d = tl.where(same, a, 0.0)
    d = eye
    for j in tl.static_range(BC):
        sel = (rr % BC) == j
        col = tl.sum(tl.where(sel[None, :], a_d, 0.0), axis=1)          # a[r, block(r) * BC + j]
        row = tl.sum(tl.where(sel[:, None] & same, d, 0.0), axis=0)     # d[block(c) * BC + j, c]
        d = d - tl.where(same, col[:, None] * row[None, :], 0.0)
    n_mat = tl.dot(d, tl.where(same, 0.0, a), input_precision=INV_PREC)
    p_mat = eye - n_mat
    for _ in tl.static_range(C // BC - 2):
        p_mat = eye - tl.dot(n_mat, p_mat, input_precision=INV_PREC)
    return tl.dot(p_mat, d, input_precision=INV_PREC)


@triton.jit
def chunk_intra_kernel(
    q, k, v, g, beta, A_log, dt_bias, cu_seqlens,
    w_out, u_out, qg_out, kg_out, aqk_out, gc_out,
    s_w, s_u, s_qg, s_kg, s_aqk, s_gc,
    scale, lower_bound, T, N, NT,
    H: tl.constexpr, HV: tl.constexpr, K: tl.constexpr, V: tl.constexpr,
    C: tl.constexpr, BC: tl.constexpr, BK: tl.constexpr, BVI: tl.constexpr,
    GATE: tl.constexpr, HAS_A: tl.constexpr, HAS_DT_BIAS: tl.constexpr,
    USE_L2NORM: tl.constexpr, USE_BETA_SIGMOID: tl.constexpr,
    IS_VARLEN: tl.constexpr, LOG_N: tl.constexpr,
    DOT_DT: tl.constexpr, INV_PREC: tl.constexpr, LOOP_STAGES: tl.constexpr, ABL: tl.constexpr,
):
    """One (chunk slot, value head). Inputs q,k ``[*, H, K]``, v ``[*, HV, V]``, g ``[*, HV, K]``,
    beta ``[*, HV]`` (token-major, any float dtype); outputs are scratch tensors ``[HV, NC, ...]``
    with head strides ``s_*``. ``ABL``: timing-only ablation bits for ``bench_kda_prefill.py
    --ablate`` (skip 1 off-diagonal blocks, 2 diagonal hierarchy, 4 inverse, 8 w/qg/kg, 16 u; the
    results are wrong when any is set); the library always passes 0."""
    pid = tl.program_id(0)
    hv = tl.program_id(1)
    h = hv // (HV // H)
    hv64 = hv.to(tl.int64)
    tl.static_assert(C == 4 * BC, "the factoring hierarchy is written for 4 blocks per chunk")

    start, length = _locate_chunk(pid, cu_seqlens, T, N, C, NT, IS_VARLEN, LOG_N)
    if length <= 0:
        return

    rows = tl.arange(0, C)
    rmask = rows < length
    tok = (start + rows).to(tl.int64)
    b_beta = tl.load(beta + tok * HV + hv, mask=rmask, other=0.0).to(tl.float32)
    if USE_BETA_SIGMOID:
        b_beta = tl.where(rmask, sigmoid_tl(b_beta), 0.0)
    b_A = 1.0
    if HAS_A:
        b_A = tl.exp(tl.load(A_log + hv).to(tl.float32))

    acc_kk = tl.zeros([C, C], dtype=tl.float32)   # sum_d k_i k_j e^{G_i - G_j}, j < i
    acc_qk = tl.zeros([C, C], dtype=tl.float32)   # sum_d q_i k_j e^{G_i - G_j}, j < i
    diag_qk = tl.zeros([C], dtype=tl.float32)     # q_i . k_i
    ssq_q = tl.zeros([C], dtype=tl.float32)
    ssq_k = tl.zeros([C], dtype=tl.float32)

    # ---------------------------------------------------------------- pass 1: scores
    for kb in tl.range(0, K, BK, num_stages=LOOP_STAGES):
        acc_kk, acc_qk, diag_qk, ssq_q, ssq_k = _score_slice(
            q, k, g, dt_bias, tok, rmask, h, hv, kb, b_A, lower_bound, acc_kk, acc_qk, diag_qk,
            ssq_q, ssq_k, H, HV, K, C, BC, BK, GATE, HAS_A, HAS_DT_BIAS, USE_L2NORM, DOT_DT, ABL)

    # ---------------------------------------------------------------- scaling (l2norm, beta)
    if USE_L2NORM:
        rq = l2_inv_norm_tl(ssq_q)
        rk = l2_inv_norm_tl(ssq_k)
    else:
        rq = tl.full([C], 1.0, tl.float32)
        rk = tl.full([C], 1.0, tl.float32)
    rr = tl.arange(0, C)
    a_kk = acc_kk * (b_beta * rk)[:, None] * rk[None, :]
    a_qk = (acc_qk + tl.where(rr[:, None] == rr[None, :], diag_qk[:, None], 0.0)) * (scale * rq)[:, None] * rk[None, :]

    slot = pid.to(tl.int64)
    o_cc = slot * C * C + rr[:, None] * C + rr[None, :]
    tl.store(aqk_out + hv64 * s_aqk + o_cc, a_qk.to(aqk_out.dtype.element_ty))

    # ---------------------------------------------------------------- (I + A_kk)^-1
    if (ABL & 4) == 0:
        t_inv = _unit_lower_inverse(a_kk, C, BC, INV_PREC)
    else:  # ablation: keep a_kk live (as the real inverse does) so only the inverse is skipped
        t_inv = tl.where(rr[:, None] == rr[None, :], 1.0, 0.0) + a_kk * 1e-30

    # ---------------------------------------------------------------- pass 2: w, qg, kg, gc
    for kb in tl.range(0, K if (ABL & 8) == 0 else 0, BK, num_stages=LOOP_STAGES):
        cols = kb + tl.arange(0, BK)
        b_q, b_k, b_g = _load_gated(q, k, g, dt_bias, tok, rmask, h, hv, cols, b_A, lower_bound,
                                    H, HV, K, GATE, HAS_A, HAS_DT_BIAS)
        b_q = b_q * rq[:, None]
        b_k = b_k * rk[:, None]
        gcum = tl.cumsum(b_g, axis=0)
        e_g = tl.exp(gcum)
        rev = tl.cumsum(b_g, axis=0, reverse=True)
        e_kg = tl.exp(rev - b_g)
        o_ck = slot * C * K + rr[:, None] * K + cols[None, :]
        x = b_k * e_g * b_beta[:, None]
        b_w = tl.dot(t_inv, x, input_precision=INV_PREC)
        tl.store(w_out + hv64 * s_w + o_ck, b_w.to(w_out.dtype.element_ty))
        tl.store(qg_out + hv64 * s_qg + o_ck, (b_q * e_g * scale).to(qg_out.dtype.element_ty))
        tl.store(kg_out + hv64 * s_kg + o_ck, (b_k * e_kg).to(kg_out.dtype.element_ty))
        tl.store(gc_out + hv64 * s_gc + slot * K + cols, tl.exp(tl.sum(b_g, axis=0)))

    # ---------------------------------------------------------------- u = Tinv (beta v)
    for vb in tl.range(0, V if (ABL & 16) == 0 else 0, BVI, num_stages=LOOP_STAGES):
        vcols = vb + tl.arange(0, BVI)
        b_v = tl.load(v + (tok[:, None] * HV + hv) * V + vcols[None, :], mask=rmask[:, None], other=0.0)
        b_u = tl.dot(t_inv, b_v.to(tl.float32) * b_beta[:, None], input_precision=INV_PREC)
        tl.store(u_out + hv64 * s_u + slot * C * V + rr[:, None] * V + vcols[None, :], b_u)
