"""Intra-chunk stage of chunked KDA prefill: everything that is parallel over chunks, fused.

What it computes (DESIGN.md section 1), for one chunk of C tokens (``CHUNK_SIZE`` in ``chunk.py``:
32) of one sequence and one value head ``hv`` (q/k head ``h = hv // (HV // H)``), after the
optional per-token preprocessing (gate ``kda_gate_tl`` on ``g + dt_bias``, q/k L2 norm, ``beta = sigmoid(beta)``
or ``2 sigmoid(beta)``, ``beta_from_logits_tl``):

    G        = cumsum(g) inside the chunk (per channel, <= 0, non-increasing)
    A_kk     = beta_i * sum_d k_id k_jd e^{G_id - G_jd}       (j <  i)
    A_qk     = scale  * sum_d q_id k_jd e^{G_id - G_jd}       (j <= i)
    Tinv     = (I + A_kk)^-1
    w        = Tinv (beta k * e^G)            -> w   [C, K]  (INTER dtype)
    Tinv diag(beta)                           -> tb  [C, C]  fp32 (u = tb v is formed by the
                                                              state stage, from v as given)
    qg       = scale q * e^G                  -> qg  [C, K]  (INTER dtype)
    kg       = k * e^{G_C - G}                -> kg  [C, K]  (INTER dtype)
    gC       = e^{G_C}                        -> gc  [K]     fp32
    A_qk                                      -> aqk [C, C]  (INTER dtype)

Only these go through HBM; the sequential stage (``chunk_state.py``) reads them once per chunk.
Rows past the end of a sequence are loaded as ``q = k = beta = 0, g = 0``: they change
neither the state nor any real output (their columns of ``tb`` are 0).

Grid: ``(NC, HV)`` with ``NC`` the number of chunk *slots*, a bound that depends only on shapes
(or ``(hi - lo, HV)`` over the slots ``[lo, hi)`` when the pipeline runs in parts, ``chunk.py``).
Fixed length: slot ``s = b * NT + c`` (``NT = cdiv(T, C)``). Varlen: sequence ``n`` owns the
slots ``cu[n] // C + n + c`` for its chunks ``c``; these never collide and stay below
``T // C + N`` (see ``chunk.py``). A program finds its sequence by a binary search over
``cu_seqlens`` (``f(n) = cu[n] // C + n`` is non-decreasing) and exits when its slot is a gap.
No host synchronization, no metadata tensors.

Numerics (overflow-safe for unbounded gates: every exponential of g's sums has an argument <= 0; the
only other ones are the sigmoids of the lower-bound gate and of beta, whose ``e^-x`` may be +inf
and then give exactly 0, see ``gate.sigmoid_tl``):
the chunk is split into NS = C / 16 sub-chunks of BC = 16 rows (two: the kernel requires C = 32).

* The off-diagonal sub-block (rows of block 1 against columns of block 0: with chunks of 32 there
  is no other) factors through ``e0``, the last row of block 0:
  ``e^{G_i - G_j} = e^{G_i - G_e0} * e^{G_e0 - G_j}``, i.e. the sum of g over ``[r1, i]`` (left
  factor, rows of block 1) and over ``(j, e0]`` (right factor, rows of block 0), both <= 0 and both
  inside the row's own block. One batched product of 0/1 matrices with g (block 1: inclusive
  prefix, block 0: exclusive suffix; see the sums of g below) gives both exponents and one
  exponential per element both factors. One 2-D tensor-core dot ``[C, BK] x [BK, C]`` per K slice
  of the factored tiles with themselves gives the block; its other blocks pair factors that do not
  belong together (finite: every factor is <= 1) and are masked once after the loop.
  The exponents are sums over a 16-row block's span of g, not the chunk's.
* Diagonal sub-blocks (i >= j inside one block of 16) use a binary hierarchy instead of pairwise
  exponentials: at level ``l`` in (8, 4, 2, 1) the pairs with ``i`` in the lower half and ``j``
  in the upper half of a group of ``2l`` rows factor through the group's middle row ``a``:
  ``e^{G_i - G_a} * e^{G_a - G_j}``, both <= 0. Every pair i > j is covered by exactly one level
  (the highest bit where i and j differ); i == j contributes ``q_i . k_i``. One exponential per
  element per level (``e^{-|G_t - G_a|}`` serves as left factor for rows below the anchor and
  right factor above it), i.e. 4 per element instead of 16 for pairwise, and the sums run on
  tensor cores (batched ``[NS, BC, BK] x [NS, BK, BC]`` of the factored tiles with themselves; the
  level's pairs are selected from the product, the others are finite and dropped). The exponent ``-|G_t - G_a|`` is the sum
  of g over the rows between t and a: a product of a 0/1 matrix with g (below).
* With the lower-bound gate (``DIAG_ANCHOR``: every step's g in ``[lower_bound, 0]``, ``lower_bound
  >= -5``) the diagonal blocks skip the hierarchy: ``|G_t - G_a| <= 40`` inside a block for its row
  ``a = 8``, so one factorization through that row with factors in ``[e^-40, e^40]`` (fp32 operands
  rounded to tf32, ``_diag_anchored``) covers every pair of the block. Its exponent ``G_t - G_a``
  is a sum of g over ``(a, t]`` below the anchor and minus the sum over ``(t, a]`` above it: a
  product of a matrix of 0 and +-1 (one sign per row) with g.
* ``(I + A_kk)^-1``: the 16x16 diagonal blocks are inverted by forward substitution on their 4x4
  diagonal blocks (4 rank-1 steps for all sixteen at once, CUDA cores) and two levels of the exact
  2x2 block formula (``_diag_block_inverse``, ``INV_SUB_BLOCK``); then with ``D`` = block-diagonal
  inverse and ``N = D * A_off`` (strictly block-lower, ``N^NS = 0``): ``Tinv = (I - N) D``
  (tensor cores; ``N^2 = 0`` with two sub-chunks).
* ``w, qg`` use ``e^{G}``; ``kg`` uses ``e^{G_C - G}`` (the sum of g after row i); ``gC = e^{G_C}``
  (the last row of ``e^{G}``).
* Sums of g over row spans (every exponent of this stage) are products of 0/1 matrices with
  ``g log2 e = hi + lo`` (fp16 halves, ~22 bits; clamped at -2^15, where 2^x is 0 in fp32 anyway)
  on the tensor cores with fp32 accumulation; every exponential is an ``exp2`` of such a sum, so
  none multiplies by log2 e again. They replace scans and reductions across lanes and warps, which
  went through shared memory. Every such sum adds terms ``hi + lo <= 0`` of one sign, so the
  exponents that matter (> -150, below that 2^x is 0) are accurate to ~2^-21 relative, and a sum
  is above 0 only where it is ~0 (no clamp: its factor is 1 to fp32's precision); the anchored
  diagonal's signed sums are bounded by 40 log2 e instead.
* Precision: score dots take ``DOT_DT`` operands (fp16 by default: every operand is ``|x|`` times a
  factor <= 1, so it fits fp16 whenever |q|, |k| < 65504; 11-bit significand like tf32) with fp32
  accumulation; the inverse and w use fp32 operands with ``INV_PREC`` (tf32 by default), and so
  does the state stage's ``u = tb v``. The MMA truncates fp32 operands to tf32 (``dot_operands``);
  only ``tb`` is stored rounded to nearest (``tf32_operand``): in an interpreter model of the
  truncation it carries nearly all of the loss (state error 4.20e-4 truncated, 3.01e-4 with tb
  rounded, 2.91e-4 with the inverse's and w's operands rounded too: w is stored in fp16 anyway;
  ``benchmarks/results/cpu_checks_20261202_s34/tf32_sites_model.log``).
  Precomputed gates must be log decays (``g <= 0``), as the API documents.
* Exponentials of log decays are ``ex2.approx.ftz`` (``tl.exp2`` of the base-2 sums above): results
  below 2^-126 flush to zero. Every factor they give is an fp16 operand (0 there anyway), a tf32
  operand bounded below by e^-40 (``_diag_anchored``), or ``gC``, which multiplies a state (H200,
  stage 1 with precomputed g 4.5% faster than ``tl.exp``; ``benchmarks/results/logs_h200_20261202c/
  r1_means.log``; base 2 throughout: 2% more, ``logs_h200_20261202f/r1_means.log``).

Notes (measured on the H200, ``python benchmarks/bench_kda_prefill.py --ablate``; CUDA-graph medians
of this stage alone at B1 T8192 H=HV=32 K=V=128 bf16, precomputed g; 2026-11-29):

* Forty-fourth session: the diagonal blocks' inverse by substitution on 8x8 sub-blocks and one
  exact 2x2-block level (``_diag_block_inverse``; offline sm_90 instructions per warp and program
  7,956 -> 7,779 with g, 8,959 -> 8,781 with the softplus gate, 7,740 -> 7,541 with the lower bound,
  spills 44 / 32 / 0 -> 20 / 20 / 0 bytes, ``cpu_checks_20261205_s43/intra_sass_blocked_inverse*.log``).
  This stage, means of five alternating rounds (``logs_h200_20261205/r1_means.log``, ``r3_means.log``),
  B1 T8192 / B8 T1024 in us: g 299.6 -> 305.5 / 317.9 -> 303.4, gk 301.0 -> 306.3 / 318.1 -> 304.5,
  softplus gate 328.5 -> 318.7 / 328.6 -> 319.5, lower bound 305.3 -> 300.1 / 306.3 -> 296.9; the
  whole call faster in all eight (B1 g 516.2 -> 513.9, B8 g 466.9 -> 450.5). Why this stage alone
  is 2% slower at B1 with g (and gk) while the call is not was not profiled. Aligned keys with slow decay
  (``prefill_aligned_keys_accuracy.py``, bf16, T = 1024): o / state from fp64 5.32e-3 / 6.55e-3
  against 5.60e-3 / 7.25e-3 at beta ~1, 5.02e-2 / 5.78e-2 against 7.26e-2 / 8.03e-2 at beta ~2
  (FLA 0.6 on the same inputs: 4.91e-2 / 6.58e-2 and 3.38e-1 / 3.87e-1; ``r1_aligned_keys_*.log``).
  Forty-eighth session: sub-blocks of 4 rows and two levels instead (``INV_SUB_BLOCK``, measured on
  an H100: this stage 0.8-2.2% faster in every case, see there).

* Thirty-eighth session: the score products of the factored tiles with themselves, the pairs
  selected from the product (``pair``, ``off_blk``) instead of zeroed operands (three selects per
  element and level; the target entries see the same operands, so the outputs are the same bits:
  ``cpu_checks_20261202_s38/stage1_bits_ab.log``). Offline sm_90 instructions per warp and program
  11,031 -> 9,499 (g; spills 8 -> 0 bytes), 11,768 -> 10,239 (softplus gate), 8,602 -> 8,181 (lower
  bound) (``intra_sass_self_products.log``). This stage, means of two alternating rounds
  (``logs_h200_20261202e/r4_means.log``), B1 T8192 / B8 T1024 in us: g 332.4 -> 316.8 / 331.8 ->
  315.4, softplus gate 359.9 -> 341.9 / 361.2 -> 343.5, lower bound 309.2 -> 307.0 / 308.4 -> 306.9.

* Thirty-third session, the lower-bound gate's anchored diagonal (``diag_anchor``; offline sm_90:
  14,598 -> 12,370 instructions per warp and program, spills 28 -> 0 bytes,
  ``cpu_checks_20261201_s33/intra_sass_lower_bound.log``): this stage 402.5 -> 394.2 us at B1 T8192,
  403.3 -> 389.0 at B8 T1024; the whole call 636.4 -> 612.1 and 538.2 -> 523.4 (lower-bound gate at
  -5 in the kernel, ``logs_h200_20261201l/r2_anchor_ab.log``). Without rounding the operands to
  tf32 first (run 1: the MMA truncates them) the stage was 1.04x faster but o's error at the issue's
  shape rose 1.74e-3 -> 1.97e-3; rounded, 1.75e-3.

* Thirty-fifth session: the off-diagonal factors' and the anchored diagonal's exponents as 0/1 (+-1)
  matrix products like the hierarchy's, instead of a block-local ``tl.cumsum`` of g, a ``tl.sum``
  and a ``tl.min`` over rows (scans and reductions across lanes: offline sm_90, shuffles per warp
  and program 1066 -> 298, 1314 -> 298 with the lower-bound gate; instructions 14,178 -> 12,375,
  15,363 -> 13,680 with the softplus gate, 12,523 -> 9,732 with the lower-bound gate), and one
  exponential per element for both off-diagonal factors instead of two. Nsight Compute before
  (``logs_h200_20261202b/r1_ncu_intra_g_hot_lines.txt``, B8 T1024): the reductions' ``a + b`` was
  the stage's most stalled line (11.5% of the samples). Measured (CUDA-graph medians, alternating
  processes, ``logs_h200_20261202b/r3_round_ab_*.log``): this stage at B1 T8192 369.8 -> 348.4 us
  (g), 415.7 -> 375.4 (softplus gate), 396.1 -> 312.0 (lower-bound gate); at B8 T1024 374.8 ->
  352.0, 413.1 -> 375.5, 396.3 -> 311.8; accuracy at the issue's shape unchanged to four digits.
  The same products as 2-D ``[C, C] x [C, BK]`` dots (run 2) made precomputed g and the gate
  *slower* (408.9 and 429 us at B1 T8192): their accumulator layout differs from the hierarchy's
  batched one, so q and k were held in both layouts (36 bytes of spills).
* Seventeenth session: the gate is evaluated once (``STASH_G``: pass 1 parks the gated g's fp16
  halves in the chunk's qg / kg tiles, pass 2 reads them back before overwriting them): with the
  gate 0.446 -> 0.415 ms, bits unchanged (``logs_h200_20261130m/r7_ablate_stash.log``).
* Ninth session: u left this stage for the state stage (``tb = Tinv diag(beta)`` stored instead):
  0.404 -> 0.369 ms (0.497 -> 0.447 with the gate) (``logs_h200_20261130e/ablate_intra_stash.log``,
  ``bench_prefill_u_in_state.log``); register caps 144 / 128 no better (``ablate_intra_maxnreg.log``).
* Eighth session (``logs_h200_20261130d/ablate_intra_offdiag2d.log``): 0.406 ms (0.500 with the
  softplus gate); skipping parts: the off-diagonal block 0.366, the diagonal hierarchy 0.419, the
  inverse 0.358, pass 2 (w, qg, kg) 0.281, u (then computed here) 0.363; pass 1 alone 0.196; loads
  alone 0.079.
* Chunks of 32 (the default since the fourth session), 2 warps, registers capped at 168, loops
  pipelined 3 deep: 0.656 ms (fifth session). Everything below was measured with chunks of 64.
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
  kernel (1.05 + 0.52 ms). Numbers and analysis in docs/history/prefill.md.
* Conclusion for the next design: fewer shared-memory round trips per chunk (3-D reshapes,
  permutes and small batched dots each stage data through shared memory) and a register budget
  that admits 4+ CTAs per SM; pass 2's cumsums and the w product are the second target.
"""

from __future__ import annotations

import triton
import triton.language as tl

from kimiops.kda.gate import LOG2E, beta_from_logits_tl, kda_gate_tl, l2_inv_norm_tl
from kimiops.kda.kernels.chunk_layout import CALL_COUNTS
from kimiops.kda.kernels.dot_operands import f16_hi_lo, tf32_operand, tf32_rna

# Tuning choices of this kernel; benchmarks/bench_kda_prefill.py sweeps candidates (--sweep) and
# prints the winner, --ablate times variants per stage. BK: K-slice width of pass 1 (scores); BK2: of
# pass 2 (w, qg, kg; default BK); loop_stages: software-pipelining depth of the K loops; maxnreg:
# register cap per thread. (BVI, the V-slice width of the u loop, went with the loop in the ninth
# session: u is formed by the state stage.)
# Sixth session (logs_h200_20261130b/ablate_intra_pass2.log, ablate_intra_cumsum_mma.log): pass 2's
# two chunk-wide cumsums per slice (scans across the two warps through shared memory: ~20% of the
# stall samples in Nsight Compute, ncu_hot_lines.txt) taken as fp16 hi/lo products with triangular
# ones matrices on the tensor cores: 0.618 -> 0.502 ms at BK2 32 (precomputed g),
# 0.839 -> 0.651 with the gate; BK2 16 0.506 / 0.584 (the default), BK2 64 spills (0.568 / 0.806).
# With scans, BK2 32 beat 16 (0.647 vs 0.678 ms); scans inside the 16-row sub-chunks plus sub-chunk
# totals were no better (0.641-0.710).
# The diagonal hierarchy's exponents (a sum of g over a span of rows per level) as 0/1-matrix products
# instead of anchor reductions: 0.507 -> 0.452 ms (g), 0.585 -> 0.553 (gate) (ablate_intra_diag_mma.log).
# Those variants are in the history (commit d03622e); the kernel keeps the products only.
# Eighth session (logs_h200_20261130d/ablate_intra_before.log -> ablate_intra_offdiag2d.log): the
# off-diagonal block as one 2-D [C, BK] x [BK, C] product with block-local factors, instead of a
# batched [NS, BC, BK] x [NS, BK, C] product whose right operand carried a between-blocks factor
# built by 4-D broadcasts: 0.452 -> 0.406 ms (g), 0.540 -> 0.500 (gate); no spills at 168 registers.
# Tried and dropped: pass 2 folded into pass 1 (norms from a pass 0, x = beta k e^G written by pass 1
# and turned into w = Tinv x in place): 0.739 ms, 296-404 bytes of spills (0.627 ms uncapped at 255
# registers) (ablate_intra_fused_pass.log).
# Eleventh session (logs_h200_20261130g/ncu_intra_shared_excessive_lines.txt, ablate_intra_loop_stages.log,
# ablate_intra_load_mma.log): 63% of the excessive shared-memory wavefronts are the reads of the q / k / g
# tiles that the pipelined loops stage unswizzled (32-byte rows; a load with elementwise users gets
# no swizzle), 22% the fp16 split of g, 9% pass 2's x. Routing the tiles through an exact identity
# product (a dot-operand user: swizzled staging, ldmatrix, accumulator layout; branch exp/id-dot)
# removes those conflicts but adds spills: 0.369 -> 0.451-0.472 ms (pass 1), 0.378 (pass 2 only).
# Unpipelined loops (convert_layout's own conflict-free staging) spill too: 0.536 ms (loop_stages 1).
# The conflicts are not what bounds this kernel at 168 registers.
# stash_g: pass 1 parks g's fp16 halves (after the gate, if any) in the qg / kg scratch for pass 2
# instead of pass 2 re-running the gate (the gate evaluated twice cost B1 T8192 0.446 vs 0.409 ms with
# pass 2's gate skipped, timing only: logs_h200_20261130m/r6_ablate_gate.log) and the split (with
# precomputed g too since the thirty-ninth session: offline sm_90 8,816 -> 8,325 instructions per warp
# and program, spills 0 -> 32 bytes, cpu_checks_20261202_s38/candidate_stash_g_sass.log; measured
# below).
# diag_anchor (lower-bound gate only): the diagonal blocks by one bounded factorization
# (``_diag_anchored``) instead of the four-level hierarchy.
# Thirty-third session (logs_h200_20261201l/r5_regcap_ab.log; graph medians of this stage): maxnreg 144
# (7 CTAs per SM) loses for precomputed g and the softplus gate (B8 T1024 371.8 -> 391.8 us, 413.0 ->
# 424.7); the anchored lower-bound variant fits 128 registers (8 bytes of spills) and is within 0.5-1.5%
# there (389.6 -> 387.4, B1 T8192 395.5 -> 389.6): one cap for all, 168.
# Thirty-ninth session (logs_h200_20261202f/r1_means.log; stage 1 / call in us, two alternating rounds,
# B1 T8192 | B8 T1024): base-2 span sums, the stash for precomputed g, then fp16 factor products,
# stacked. g 316.9 / 552.6 -> 310.4 / 541.2 -> 300.0 / 524.6 -> 301.1 / 518.2 | 317.1 / 454.5 ->
# 311.0 / 447.8 -> 315.2 / 452.9 -> 319.8 / 459.7; softplus gate 343.6 / 556.0 -> 337.9 / 547.0 ->
# 338.1 / 546.4 -> 329.6 / 538.4 | 343.1 / 476.2 -> 338.1 / 469.8 -> 338.0 / 471.0 -> 330.7 / 464.1.
# All three kept (the B1 cells are the table's lowest; B8 g, the one loss, stays at 2.3x FLA).
# maxnreg 128 on top (8 programs per SM; 40 / 28 bytes of spills with g / the gate,
# cpu_checks_20261202_s39/intra_regcap128_offline.log): 301.1 -> 366.1 (g, B1), 329.6 -> 360.6
# (gate): 168 stays.
# Fortieth session (logs_h200_20261202g/r4_means.log, as above): maxnreg 144 (7 programs per SM; 60
# bytes of spills, cpu_checks_20261202_s40/intra_regcap144_offline.log) loses in every mode: B1 T8192
# g 300.1 / 516.5 -> 325.6 / 533.0, gate 328.5 / 535.5 -> 345.7 / 558.9; B8 T1024 g 318.0 / 458.5
# -> 326.9 / 473.4, gate 329.8 / 461.4 -> 346.8 / 479.8.
INTRA_CONFIG = {"BK": 16, "BK2": 16, "num_warps": 2, "num_stages": 1, "loop_stages": 3,
                "maxnreg": 168, "stash_g": True, "diag_anchor": True}
INTRA_CANDIDATES = [
    {"BK": 16, "BK2": 16, "num_warps": 2, "num_stages": 1, "loop_stages": 3, "maxnreg": 168},
    {"BK": 16, "BK2": 32, "num_warps": 2, "num_stages": 1, "loop_stages": 3, "maxnreg": 168},
    {"BK": 16, "num_warps": 2, "num_stages": 1, "loop_stages": 2, "maxnreg": 168},
    {"BK": 16, "num_warps": 2, "num_stages": 1, "loop_stages": 2, "maxnreg": 128},
    {"BK": 16, "num_warps": 4, "num_stages": 1, "loop_stages": 2, "maxnreg": 168},
    {"BK": 16, "num_warps": 4, "num_stages": 1, "loop_stages": 2},
    {"BK": 16, "num_warps": 4, "num_stages": 1, "loop_stages": 1},
    {"BK": 16, "num_warps": 8, "num_stages": 1, "loop_stages": 2},
    {"BK": 32, "num_warps": 8, "num_stages": 1, "loop_stages": 2},
]

GATE_NONE, GATE_SOFTPLUS, GATE_LOWER_BOUND = 0, 1, 2


@triton.jit
def _locate_chunk(pid, cu_seqlens, T, N, C: tl.constexpr, NT, IS_VARLEN: tl.constexpr):
    """(first token, number of valid rows) of chunk slot ``pid``; rows <= 0 means an idle slot."""
    if IS_VARLEN:
        # largest n in [0, N) with cu[n] // C + n <= pid (f is non-decreasing, f(0) = 0). A loop on the
        # range rather than a constexpr trip count: one compiled kernel for every sequence count.
        lo = pid * 0
        hi = lo + N
        while hi - lo > 1:
            mid = (lo + hi) // 2
            f = tl.load(cu_seqlens + mid).to(tl.int32) // C + mid
            lo = tl.where(f <= pid, mid, lo)
            hi = tl.where(f > pid, mid, hi)
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
def _load_qk(q, k, tok, rmask, h, cols, H: tl.constexpr, K: tl.constexpr):
    """fp32 tiles q, k ``[C, BK]`` (0 on rows past the sequence)."""
    m = rmask[:, None]
    b_q = tl.load(q + (tok[:, None] * H + h) * K + cols[None, :], mask=m, other=0.0).to(tl.float32)
    b_k = tl.load(k + (tok[:, None] * H + h) * K + cols[None, :], mask=m, other=0.0).to(tl.float32)
    return b_q, b_k


@triton.jit
def _load_gated(q, k, g, dt_bias, tok, rmask, h, hv, cols, b_A, lower_bound,
                H: tl.constexpr, HV: tl.constexpr, K: tl.constexpr,
                GATE: tl.constexpr, HAS_A: tl.constexpr, HAS_DT_BIAS: tl.constexpr):
    """fp32 tiles q, k ``[C, BK]`` and log decay g ``[C, BK]`` (0 on rows past the sequence)."""
    m = rmask[:, None]
    b_q, b_k = _load_qk(q, k, tok, rmask, h, cols, H, K)
    b_g = tl.load(g + (tok[:, None] * HV + hv) * K + cols[None, :], mask=m, other=0.0).to(tl.float32)
    if GATE != 0:
        if HAS_DT_BIAS:
            b_g = b_g + tl.load(dt_bias + hv * K + cols).to(tl.float32)[None, :]
        b_g = kda_gate_tl(b_g, b_A, lower_bound, HAS_A, GATE == 2)
        b_g = tl.where(m, b_g, 0.0)
    return b_q, b_k, b_g


@triton.jit
def _split_g(x):
    """Log decays (fp32, <= 0) in base 2 (``x log2 e``: every use is an ``exp2``, so no exponential
    multiplies its argument by log2 e again) as fp16 ``hi + lo`` (~22 bits) for exact tensor-core
    products with 0/1 matrices; clamped at -2^15 (fp16 range), where ``2^x`` is 0 in fp32 anyway."""
    return f16_hi_lo(tl.maximum(x * LOG2E, -32768.0))


@triton.jit
def _span_sums(spans, g_hi, g_lo):
    """Sums of g over row spans: ``spans`` (fp16, 0/1, or 0/+-1 with one sign per row) times g's fp16
    halves (``_split_g``) on the tensor cores, exact products with fp32 accumulation (module notes)."""
    return tl.dot(spans, g_hi, tl.dot(spans, g_lo))


@triton.jit
def _decay(spans, g_hi, g_lo):
    """``2^x`` of ``_span_sums`` over spans of g <= 0 alone (``ex2.approx.ftz``). Not clamped at 0: every
    term ``hi + lo`` of a row is <= 0 (``|lo| <= 2^-11 |hi|``) and the fp32 sums of terms of one sign
    err by ~2^-22 of their size, so a sum is > 0 only where it is ~0 and the factor ~1; the clamp cost
    8 instructions per element and product (sm_90)."""
    return tl.exp2(_span_sums(spans, g_hi, g_lo))


@triton.jit
def _diag_level(g_hi, g_lo, k3, q3, dg_kk, dg_qk, NS: tl.constexpr, BC: tl.constexpr, ELL: tl.constexpr,
                DOT_DT: tl.constexpr):
    """Level ``ELL`` of the diagonal-block hierarchy: pairs (i in the lower half, j in the upper
    half) of each group of ``2*ELL`` rows, factored through the group's middle row ``a``:
    ``e^{G_i - G_a} e^{G_a - G_j}``; one ``e^{-|G_t - G_a|}`` per element serves both sides. Its
    exponent, the sum of g over ``(a, t]`` (t >= a) or ``(t, a]`` (t < a), is a product of a 0/1
    matrix with ``g = g_hi + g_lo`` on the tensor cores (no anchor extraction by reductions). The
    factored tiles multiply themselves; ``pair`` keeps the level's pairs (every factor is <= 1, so the
    dropped products are finite)."""
    GRP: tl.constexpr = 2 * ELL
    ri = tl.arange(0, BC)[:, None]
    rt = tl.arange(0, BC)[None, :]
    a = (ri // GRP) * GRP + ELL
    span = ((ri >= a) & (rt > a) & (rt <= ri)) | ((ri < a) & (rt > ri) & (rt <= a))
    e_mat = tl.broadcast_to(span.to(tl.float16)[None, :, :], (NS, BC, BC))
    f3 = _decay(e_mat, g_hi, g_lo).to(k3.dtype)
    kf = (k3 * f3).to(DOT_DT)
    qf = (q3 * f3).to(DOT_DT)
    ii = tl.arange(0, BC)[None, :, None]
    jj = tl.arange(0, BC)[None, None, :]
    pair = ((ii // GRP) == (jj // GRP)) & ((ii % GRP) >= ELL) & ((jj % GRP) < ELL)
    kf_t = tl.permute(kf, (0, 2, 1))  # [NS, BK, BC]
    dg_kk += tl.where(pair, tl.dot(kf, kf_t), 0.0)
    dg_qk += tl.where(pair, tl.dot(qf, kf_t), 0.0)
    return dg_kk, dg_qk


@triton.jit
def _diag_anchored(g_hi, g_lo, k3, q3, dg_kk, dg_qk, NS: tl.constexpr, BC: tl.constexpr):
    """The diagonal blocks with the lower-bound gate (``DIAG_ANCHOR``), where every step's g lies in
    ``[lower_bound, 0]`` with ``lower_bound >= -5``: inside a block of 16 rows, ``|G_t - G_a| <= 8 * 5 = 40``
    for the anchor ``a`` = the block's row 8 (DESIGN.md section 1: a bounded gate allows cheaper
    factorizations). So ``e^{G_i - G_j} = e^{G_i - G_a} e^{G_a - G_j}`` for every pair of the block
    with factors in ``[e^-40, e^40]``: one ``e^{x}`` and one ``e^{-x}`` per element and one batched
    dot per score instead of the four levels of ``_diag_level``. The factors times |q|, |k| < 65504
    stay below 2e22, so the operands are fp32 rounded to tf32 (``tf32_rna``; tf32 dots, fp32
    accumulation: the 11-bit significand of the fp16 operands elsewhere, with the fp32 range, where
    fp16 would overflow at e^11). Pairs j > i are masked after each dot (their products reach
    e^75 |q| |k| and may overflow; masked entries never reach the accumulators). A_qk's diagonal
    ``q_i . k_i`` (factor e^0, the largest term of its row) is left to the caller, which sums it in
    fp32 for both schemes. ``g_hi``, ``g_lo [NS, BC, BK]``: fp16 halves of g (``_split_g``).
    ``G_t - G_a`` is the sum of g over ``(a, t]`` below the anchor and minus the sum over ``(t, a]``
    above it: a product of a matrix of 0 and +-1 (one sign per row) with g's halves."""
    ri = tl.arange(0, BC)[:, None]
    rs = tl.arange(0, BC)[None, :]
    a: tl.constexpr = BC // 2
    below = (ri > a) & (rs > a) & (rs <= ri)       # (a, t]
    above = (ri < a) & (rs > ri) & (rs <= a)       # (t, a]
    signed_span = tl.where(below, 1.0, tl.where(above, -1.0, 0.0))
    s_mat = tl.broadcast_to(signed_span.to(tl.float16)[None, :, :], (NS, BC, BC))
    e_t = _span_sums(s_mat, g_hi, g_lo)                # (G_t - G_a) log2 e, in [-40, 40] log2 e
    f_l = tl.exp2(e_t)
    f_r = tl.exp2(-e_t)
    rt = tl.permute(tf32_rna(k3 * f_r), (0, 2, 1))                   # [NS, BK, BC]
    ii = tl.arange(0, BC)[None, :, None]
    jj = tl.arange(0, BC)[None, None, :]
    dg_kk += tl.where(ii > jj, tl.dot(tf32_rna(k3 * f_l), rt, input_precision="tf32"), 0.0)
    dg_qk += tl.where(ii > jj, tl.dot(tf32_rna(q3 * f_l), rt, input_precision="tf32"), 0.0)
    return dg_kk, dg_qk


@triton.jit
def _score_slice(q, k, g, dt_bias, tok, rmask, h, hv, kb, b_A, lower_bound, acc_kk, acc_qk, dg_kk, dg_qk,
                 ssq_q, ssq_k, stash_hi, stash_lo, H: tl.constexpr, HV: tl.constexpr, K: tl.constexpr,
                 C: tl.constexpr, BC: tl.constexpr, BK: tl.constexpr, GATE: tl.constexpr, HAS_A: tl.constexpr,
                 HAS_DT_BIAS: tl.constexpr, USE_L2NORM: tl.constexpr, DOT_DT: tl.constexpr,
                 STASH_G: tl.constexpr, DIAG_ANCHOR: tl.constexpr, ABL: tl.constexpr):
    """Pass 1 on the K slice ``[kb, kb + BK)``: accumulates the score blocks and sums of squares;
    with ``STASH_G`` also stores the gated g as fp16 ``hi`` / ``lo`` ``[C, BK]`` at ``stash_hi`` /
    ``stash_lo`` (the chunk's ``[C, K]`` tiles) for pass 2."""
    NS: tl.constexpr = C // BC
    LOG_BC: tl.constexpr = 4  # BC == 16
    ii = tl.arange(0, BC)[None, :, None]
    jj = tl.arange(0, BC)[None, None, :]
    cols = kb + tl.arange(0, BK)
    b_q, b_k, b_g = _load_gated(q, k, g, dt_bias, tok, rmask, h, hv, cols, b_A, lower_bound,
                                H, HV, K, GATE, HAS_A, HAS_DT_BIAS)
    s_hi, s_lo = _split_g(b_g)
    if STASH_G:
        o_tile = tl.arange(0, C)[:, None] * K + cols[None, :]
        tl.store(stash_hi + o_tile, s_hi)
        tl.store(stash_lo + o_tile, s_lo)
    if USE_L2NORM:
        ssq_q += tl.sum(b_q * b_q, axis=1)
        ssq_k += tl.sum(b_k * b_k, axis=1)
    q3 = tl.reshape(b_q, (NS, BC, BK))
    k3 = tl.reshape(b_k, (NS, BC, BK))
    g_hi = tl.reshape(s_hi, (NS, BC, BK))
    g_lo = tl.reshape(s_lo, (NS, BC, BK))
    dg_qk += tl.where(ii == jj, tl.sum(q3 * k3, axis=2)[:, :, None], 0.0)  # A_qk's diagonal, in fp32
    if not DIAG_ANCHOR:
        # the factored tiles as products of DOT_DT operands (fp16: HMUL2, two elements per
        # instruction, no conversion after the product; the factor is rounded to fp16 once more than
        # before, ~2^-11 relative). The anchored diagonal keeps fp32 q, k (its tf32 operands).
        q3 = q3.to(DOT_DT)
        k3 = k3.to(DOT_DT)
    # off-diagonal block (row block 1, column block 0; chunks of 32 have no other):
    # e^{G_i - G_j} = e^{G_i - G_e0} e^{G_e0 - G_j} with e0 the last row of block 0, i.e. the sums of
    # g over [r1, i] for a row i of block 1 (the left factor) and over (j, e0] for a row j of block 0
    # (the right factor), both <= 0 and both inside the row's own block: one batched product of 0/1
    # matrices (block 1: inclusive prefix, block 0: exclusive suffix) with g's halves gives both
    # exponents, one exponential per element both factors. The factored tiles times themselves give
    # the block (rows of block 1, columns of block 0); the other blocks are finite (factors <= 1) and
    # masked after the loop. Masking the operands instead cost 3 selects per element (sm_90: 48
    # instructions per slice and program, precomputed g).
    if (ABL & 1) == 0:
        in_b1 = tl.arange(0, NS)[:, None, None] == 1
        m_off = tl.where(in_b1, jj <= ii, jj > ii).to(tl.float16)             # [NS, BC, BC]
        f_off = _decay(m_off, g_hi, g_lo).to(k3.dtype)
        kf_off = tl.reshape(k3 * f_off, (C, BK)).to(DOT_DT)
        qf_off = tl.reshape(q3 * f_off, (C, BK)).to(DOT_DT)
        acc_kk = tl.dot(kf_off, tl.trans(kf_off), acc_kk)
        acc_qk = tl.dot(qf_off, tl.trans(kf_off), acc_qk)
    if DIAG_ANCHOR:  # lower-bound gate: the diagonal blocks in one factorization (_diag_anchored)
        if (ABL & 2) == 0:
            dg_kk, dg_qk = _diag_anchored(g_hi, g_lo, k3, q3, dg_kk, dg_qk, NS, BC)
    else:
        # diagonal blocks: levels l = 8, 4, 2, 1
        if (ABL & 2) == 0:
            for lvl in tl.static_range(LOG_BC):
                dg_kk, dg_qk = _diag_level(g_hi, g_lo, k3, q3, dg_kk, dg_qk, NS, BC, BC // (2 << lvl), DOT_DT)

    return acc_kk, acc_qk, dg_kk, dg_qk, ssq_q, ssq_k


# Rows of the sub-blocks that _diag_block_inverse's forward substitution inverts, then doubled to
# the 16-row diagonal blocks by exact 2x2-block levels: 4 (two levels). Forty-eighth session, H100
# (no H200 was lent), three alternating rounds, this stage / the whole call in us, sub-blocks of
# 8 -> 4 (-> 2) (benchmarks/results/logs_h100_20261205/r1_means.log):
#   B1 T8192 g 383.7 / 614.2 -> 375.4 / 621.6 (389.5 / 622.3), softplus gate 385.3 / 624.3 ->
#   378.5 / 607.3 (392.9 / 615.0), lower bound 366.6 / 594.7 -> 363.6 / 589.4 (367.1 / 594.3);
#   B8 T1024 g 375.1 / 534.1 -> 369.6 / 529.3 (388.9 / 548.0), gate 384.2 / 546.7 -> 376.3 / 539.2.
# This stage faster in all eight cases (0.8-2.2%), the call in six (B1 with precomputed g and gk:
# +1.2% and +0.8%; not explained). Accuracy at the shape unchanged (r1_summary.log).
# Alone, the 16-row inverse of aligned keys at beta ~2 is 1.8e-3 from fp64 against 6.9e-4 with
# sub-blocks of 8 (interpreter, cpu_checks_20261205_s48/inverse_sub_block_errors.log: one more
# level of tf32-rounded operands), but whole calls on those inputs
# (prefill_aligned_keys_accuracy.py, r1_aligned_keys_b4.log, against the H200's sub-blocks of 8 in
# logs_h200_20261205/r1_aligned_keys_binv.log) are within 6% at beta ~1 and ~2 and better in the
# worst row (beta ~2, logit 6, key noise 0.01): o / state 4.52e-2 / 4.46e-2 against 5.02e-2 /
# 5.78e-2 (FLA 0.6 3.3e-1 / 3.9e-1). Sub-blocks of 2 lost on speed.
INV_SUB_BLOCK = tl.constexpr(4)


@triton.jit
def _diag_block_inverse(a, NS: tl.constexpr, BC: tl.constexpr, BASE: tl.constexpr, INV_PREC: tl.constexpr):
    """``(I + a)^-1`` for ``a [NS, BC, BC]`` fp32, strictly lower in each of its ``NS`` blocks.

    Forward substitution inverts the ``BC / BASE`` diagonal sub-blocks of ``BASE`` rows together:
    step ``j`` eliminates column ``j`` of every sub-block at once (independent systems), so ``BASE``
    rank-1 steps instead of ``BC``, each with the same two cross-lane reductions; each row reads its
    own sub-block's column of ``a`` and each column its own sub-block's row of the inverse; the
    update's cross terms land outside the sub-blocks, which no step reads and the mask drops. Then,
    doubling the block size up to ``BC``, the exact 2x2-block formula
    ``[[Pi, 0], [-Ri Q Pi, Ri]] = (I - Dh Qe) Dh`` with ``Dh = diag(Pi, Ri)`` the inverse so far and
    ``Qe`` the blocks ``Q`` of ``a`` alone (``(Dh Qe)^2 = 0``), as the chunk level does with its
    sub-chunks. No power series of ``a``: every factor is an exact inverse or a block of ``a``, so
    nothing grows where the blocks' powers do (aligned keys, slow decay; a product form was 0.04-26
    off there, ``cpu_checks_20261204_s42``).

    Precision with ``INV_PREC == "tf32"``: ``Dh Qe`` cancels (for aligned keys its entries are sums
    of ~8 terms of size ~beta^2 that leave O(1)), so it runs in ``tf32x3`` (fp32-accurate); the
    second product takes operands rounded to nearest tf32 (``tf32_operand``), which is what the
    chunk level's truncating products would make of ``Dh`` anyway. Torch model of the H200's
    truncating MMA (``benchmarks/results/cpu_checks_20261205_s43/blocked_inverse_model.log``): the
    chunk's inverse 1.0e-5-6.3e-5 from fp64 on random keys (substitution over 16 rows: 1.5e-5-1.1e-4),
    0.56-1.09x of it on aligned keys with slow decay, where both products on rounded tf32 operands
    were up to 1.3x (these figures for sub-blocks of 8; ``INV_SUB_BLOCK`` says what 4 changes).
    ``BASE == BC`` is plain substitution."""
    ii = tl.arange(0, BC)[None, :, None]
    jj = tl.arange(0, BC)[None, None, :]
    eye = tl.where(ii == jj, 1.0, 0.0)
    d = eye + tl.zeros([NS, BC, BC], dtype=tl.float32)
    for j in tl.static_range(BASE):
        col = tl.sum(tl.where(jj == (ii // BASE) * BASE + j, a, 0.0), axis=2)   # [NS, BC]
        row = tl.sum(tl.where(ii == (jj // BASE) * BASE + j, d, 0.0), axis=1)   # [NS, BC]
        d = d - col[:, :, None] * row[:, None, :]
    d = tl.where(ii // BASE == jj // BASE, d, 0.0)
    tl.static_assert(BASE << 4 >= BC, "at most four doubling levels")
    CANCEL_PREC: tl.constexpr = "tf32x3" if INV_PREC == "tf32" else INV_PREC
    for lvl in tl.static_range(4):
        half = BASE << lvl
        if half < BC:
            r = ii % (2 * half)
            c = jj % (2 * half)
            q_blk = tl.where((ii - r == jj - c) & (r >= half) & (c < half), a, 0.0)   # Qe
            n_half = tl.dot(d, q_blk, input_precision=CANCEL_PREC)
            d = tl.dot(tf32_operand(eye - n_half, INV_PREC), tf32_operand(d, INV_PREC), input_precision=INV_PREC)
    return d


@triton.jit
def _chain_tail(done, n_programs):
    """End of a stage-1 launch chained by programmatic dependent launch (``chunk.py``): the last of
    its ``n_programs`` programs to finish waits for the kernel launched before it on the stream (the
    state stage of the previous part), so this launch completes only after that one; it also puts
    the counter ``done`` (int32) back to zero for the next launch."""
    if tl.atomic_add(done, 1, sem="acq_rel") == n_programs - 1:
        tl.extra.cuda.gdc_wait()
        tl.atomic_xchg(done, 0, sem="relaxed")


@triton.jit(do_not_specialize=CALL_COUNTS)
def chunk_intra_kernel(
    q, k, g, beta, A_log, dt_bias, cu_seqlens,
    w_out, tb_out, qg_out, kg_out, aqk_out, gc_out, chain_done,
    s_w, s_tb, s_qg, s_kg, s_aqk, s_gc,
    scale, lower_bound, T, N, NT, slot_off, n_programs,
    H: tl.constexpr, HV: tl.constexpr, K: tl.constexpr,
    C: tl.constexpr, BC: tl.constexpr, BK: tl.constexpr, BK2: tl.constexpr,
    GATE: tl.constexpr, HAS_A: tl.constexpr, HAS_DT_BIAS: tl.constexpr,
    USE_L2NORM: tl.constexpr, USE_BETA_SIGMOID: tl.constexpr, NEG_EIGVAL: tl.constexpr,
    IS_VARLEN: tl.constexpr,
    DOT_DT: tl.constexpr, INV_PREC: tl.constexpr, LOOP_STAGES: tl.constexpr, STASH_G: tl.constexpr,
    DIAG_ANCHOR: tl.constexpr, ABL: tl.constexpr, PDL: tl.constexpr,
):
    """One (chunk slot, value head). Inputs q,k ``[*, H, K]``, g ``[*, HV, K]``,
    beta ``[*, HV]`` (token-major, any float dtype); outputs are scratch tensors ``[HV, NC, ...]``
    with head strides ``s_*``. Program ``(i, hv)`` works on chunk slot ``slot_off + i`` (a launch
    may cover a range of slots, see ``chunk.py``'s pipelined parts). ``T``: each sequence's rows in a
    fixed-length call, 0 and unread in a varlen call (``chunk_layout.kernel_rows``); the counts of
    ``chunk_layout.CALL_COUNTS`` are not specialized, so new counts compile no new variant.
    ``ABL``: timing-only ablation bits for ``bench_kda_prefill.py --ablate`` (skip 1 off-diagonal
    blocks, 2 diagonal hierarchy, 4 inverse, 8 w/qg/kg, 16 pass 2's gate; the results are wrong
    when any is set); the library always passes 0.
    ``PDL``: 0 where programmatic dependent launch does not exist; 1 (a chained pipeline's first part,
    and calls in one part) lets the next kernel on the stream be scheduled as this grid's last
    programs start (a chain's state stage; in one part no launch after it is a programmatic
    dependent, so the trigger does nothing, and one compiled kernel serves both); 2 (later parts, launched
    as programmatic dependents of the previous part's state stage, whose outputs this kernel never
    reads) also makes the launch complete only after that state stage (``_chain_tail`` on
    ``chain_done``, ``n_programs`` programs)."""
    if PDL != 0:
        tl.extra.cuda.gdc_launch_dependents()
    pid = tl.program_id(0) + slot_off
    hv = tl.program_id(1)
    h = hv // (HV // H)
    hv64 = hv.to(tl.int64)
    NS: tl.constexpr = C // BC

    start, length = _locate_chunk(pid, cu_seqlens, T, N, C, NT, IS_VARLEN)
    if length <= 0:
        if PDL == 2:
            _chain_tail(chain_done, n_programs)
        return

    rows = tl.arange(0, C)
    rmask = rows < length
    tok = (start + rows).to(tl.int64)
    b_beta = tl.load(beta + tok * HV + hv, mask=rmask, other=0.0).to(tl.float32)
    if USE_BETA_SIGMOID:
        b_beta = tl.where(rmask, beta_from_logits_tl(b_beta, NEG_EIGVAL), 0.0)
    b_A = 1.0
    if HAS_A:
        b_A = tl.exp(tl.load(A_log + hv).to(tl.float32))

    tl.static_assert(NS == 2, "the off-diagonal factorization assumes chunks of two sub-chunks")
    acc_kk = tl.zeros([C, C], dtype=tl.float32)   # off-diagonal block of sum k k e^.. (others masked)
    acc_qk = tl.zeros([C, C], dtype=tl.float32)
    dg_kk = tl.zeros([NS, BC, BC], dtype=tl.float32)   # diagonal blocks
    dg_qk = tl.zeros([NS, BC, BC], dtype=tl.float32)
    ssq_q = tl.zeros([C], dtype=tl.float32)
    ssq_k = tl.zeros([C], dtype=tl.float32)

    # ---------------------------------------------------------------- pass 1: scores
    # STASH_G: g is loaded, gated and split once. Pass 1 parks the gated g, split into its fp16 halves,
    # in this chunk's qg / kg tiles (2 bytes per element each, written by pass 2 only after it has
    # read them back, slice by slice); pass 2 then neither reloads g nor re-runs the gate or the split.
    slot = pid.to(tl.int64)
    stash_hi = (qg_out + hv64 * s_qg + slot * C * K).to(tl.pointer_type(tl.float16))
    stash_lo = (kg_out + hv64 * s_kg + slot * C * K).to(tl.pointer_type(tl.float16))
    for kb in tl.range(0, K, BK, num_stages=LOOP_STAGES):
        acc_kk, acc_qk, dg_kk, dg_qk, ssq_q, ssq_k = _score_slice(
            q, k, g, dt_bias, tok, rmask, h, hv, kb, b_A, lower_bound, acc_kk, acc_qk, dg_kk, dg_qk,
            ssq_q, ssq_k, stash_hi, stash_lo, H, HV, K, C, BC, BK, GATE, HAS_A, HAS_DT_BIAS, USE_L2NORM,
            DOT_DT, STASH_G, DIAG_ANCHOR, ABL)
    if STASH_G:
        tl.debug_barrier()  # every thread's stash stores before any thread's pass-2 loads

    # ---------------------------------------------------------------- scaling (l2norm, beta)
    if USE_L2NORM:
        rq = l2_inv_norm_tl(ssq_q)
        rk = l2_inv_norm_tl(ssq_k)
    else:
        rq = tl.full([C], 1.0, tl.float32)
        rk = tl.full([C], 1.0, tl.float32)
    row_kk = b_beta * rk
    row_qk = scale * rq
    rr = tl.arange(0, C)
    # acc_* hold the off-diagonal block; their other blocks pair unrelated factors (_score_slice)
    off_blk = (rr[:, None] >= BC) & (rr[None, :] < BC)
    a_off_kk = tl.where(off_blk, acc_kk, 0.0) * row_kk[:, None] * rk[None, :]
    a_off_qk = tl.where(off_blk, acc_qk, 0.0) * row_qk[:, None] * rk[None, :]
    rk3 = tl.reshape(rk, (NS, BC))
    dg_kk = dg_kk * tl.reshape(row_kk, (NS, BC))[:, :, None] * rk3[:, None, :]
    dg_qk = dg_qk * tl.reshape(row_qk, (NS, BC))[:, :, None] * rk3[:, None, :]

    # embed diagonal blocks [NS, BC, BC] into [C, C]
    blk_same = tl.arange(0, NS)[:, None, None, None] == tl.arange(0, NS)[None, None, :, None]
    a_qk = a_off_qk + tl.reshape(tl.where(blk_same, dg_qk[:, :, None, :], 0.0), (C, C))

    o_cc = slot * C * C + rr[:, None] * C + rr[None, :]
    tl.store(aqk_out + hv64 * s_aqk + o_cc, a_qk.to(aqk_out.dtype.element_ty))

    # ---------------------------------------------------------------- (I + A_kk)^-1
    eye = tl.where(rr[:, None] == rr[None, :], 1.0, 0.0)
    if (ABL & 4) == 0:
        d3 = _diag_block_inverse(dg_kk, NS, BC, INV_SUB_BLOCK, INV_PREC)
        dblk = tl.reshape(tl.where(blk_same, d3[:, :, None, :], 0.0), (C, C))
        n_mat = tl.dot(dblk, a_off_kk, input_precision=INV_PREC)
        t_inv = tl.dot(eye - n_mat, dblk, input_precision=INV_PREC)  # [C, C] fp32 (N^2 = 0: two blocks)
    else:  # ablation: keep a_off_kk live (as the real inverse does) so only the inverse is skipped
        t_inv = eye + a_off_kk * 1e-30
    # Tinv diag(beta): the state stage forms u = Tinv (beta v) from v itself (its product does not
    # depend on the state, so it stays off the recurrence's critical path), which spares this stage
    # the v loads and the fp32 u tile (C x V) for a C x C tile
    tl.store(tb_out + hv64 * s_tb + o_cc, tf32_operand(t_inv * b_beta[None, :], INV_PREC))  # u's operand, rounded

    # ---------------------------------------------------------------- pass 2: w, qg, kg, gc
    tri_incl = (rr[None, :] <= rr[:, None]).to(tl.float16)
    tri_after = (rr[None, :] > rr[:, None]).to(tl.float16)
    for kb in tl.range(0, K if (ABL & 8) == 0 else 0, BK2, num_stages=LOOP_STAGES):
        cols = kb + tl.arange(0, BK2)
        if STASH_G:
            b_q, b_k = _load_qk(q, k, tok, rmask, h, cols, H, K)
            o_tile = rr[:, None] * K + cols[None, :]
            g_hi = tl.load(stash_hi + o_tile)
            g_lo = tl.load(stash_lo + o_tile)
        else:
            b_q, b_k, b_g = _load_gated(q, k, g, dt_bias, tok, rmask, h, hv, cols, b_A, lower_bound,
                                        H, HV, K, GATE if (ABL & 16) == 0 else 0, HAS_A, HAS_DT_BIAS)
            g_hi, g_lo = _split_g(b_g)
        b_q = b_q * rq[:, None]
        b_k = b_k * rk[:, None]
        # G = L g and G_C - G = U g with L (U) the (strictly upper) triangle of ones: fp16 dots of
        # g = hi + lo with fp32 accumulation (exact products, ~22-bit g); g >= -2^15 keeps hi finite
        # and changes nothing (2^-32768 is 0 in fp32 already)
        e_g = _decay(tri_incl, g_hi, g_lo)
        e_kg = _decay(tri_after, g_hi, g_lo)
        o_ck = slot * C * K + rr[:, None] * K + cols[None, :]
        x = b_k * e_g * b_beta[:, None]
        b_w = tl.dot(t_inv, x, input_precision=INV_PREC)
        tl.store(w_out + hv64 * s_w + o_ck, b_w.to(w_out.dtype.element_ty))
        tl.store(qg_out + hv64 * s_qg + o_ck, (b_q * e_g * scale).to(qg_out.dtype.element_ty))
        tl.store(kg_out + hv64 * s_kg + o_ck, (b_k * e_kg).to(kg_out.dtype.element_ty))
        # gC = e^{G_C} is e_g's last row (rows past the end of a sequence carry g = 0): no reduction
        o_gc = slot * K + rr[:, None] * 0 + cols[None, :]
        tl.store(gc_out + hv64 * s_gc + o_gc, e_g, mask=(rr == C - 1)[:, None])
    if PDL == 2:
        _chain_tail(chain_done, n_programs)
