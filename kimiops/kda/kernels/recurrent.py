"""Triton recurrent (decode) kernel of KDA: token-by-token delta rule over a state pool.

What it computes (DESIGN.md section 1), per sequence ``n`` and value head ``hv`` (q/k head
``h = hv // G``, ``G = HV // H``), for every token ``t`` of the sequence in order::

    S   = diag(exp(g_t)) S                      # S: [K, V] fp32, held in registers
    S  += beta_t k_t (v_t - S^T k_t)^T
    o_t = S^T (scale q_t)

with the optional per-token preprocessing done in the kernel: q/k L2 norm (``l2norm_tl``, eps
1e-6), ``beta = sigmoid(beta)`` or ``2 sigmoid(beta)`` (``beta_from_logits_tl``), and the gate ``kda_gate_tl`` (softplus or
lower-bound) on ``g_raw + dt_bias[hv*K + k]`` with ``A = exp(A_log[hv])``.

Grid: one dimension of ``NV * N * HV`` programs, ``NV = cdiv(V, BV)``. Program ``pid`` owns
sequence ``n``, value head ``hv`` and the V-columns ``[iv*BV, iv*BV + BV)`` of that head's state:
a ``[BV, K]`` tile (V-first state ``[.., V, K]``, K contiguous: rows of K are 16-byte vector
loads) or a ``[K, BV]`` tile (K-first state ``[.., K, V]``). The V columns of a state evolve
independently (each needs all of q, k, g of its head and only its slice of v), so splitting V
across CTAs lets a batch of one sequence fill the GPU. Adjacent programs are the V tiles of one
head, so they share q/k/g through L2. Each program reads its tile once, loops over the tokens in
registers (the next token's q/k/g/v/beta are loaded before the current token is computed) and
writes the tile once: a pool updated in place (``ht is h0``) has no cross-CTA hazard as long as
different sequences own different slots.

Numerics: all math in fp32; the state is fp32 in registers (bf16 pools are loaded as fp32 and
rounded to bf16, round-to-nearest-even, on store); o is stored in o's dtype. The only
exponentials evaluated on gates are ``exp(g)`` with ``g <= 0`` (log decays; a softplus gate of
``|g|`` ~ 3e3 underflows to exactly 0, which is the right answer), plus those inside ``gate.py``:
softplus takes ``e^-|x|`` (<= 1), and the sigmoids of the lower-bound gate and of beta may take an
``e^-x`` of +inf, which gives exactly 0 (``sigmoid_tl``). At head dims up to 32, the products of both
reductions over K (the error's and o's) are rounded before they are summed (``_ROUND_PRODUCTS_MAX_BK``), so
every lane's copy of a reduced value is the same sum.

Speculative verification (``SPEC``: indices ``[N, T_max]``, vLLM's convention): sequence n starts
from slot ``idx[n, a_n - 1]`` (``a_n = num_accepted_tokens[n]``, or ``idx[n, 0]`` without it) and
the state after its token t is stored to slot ``idx[n, t]`` (skipped where that index is -1), so
the engine can resume from whichever draft token it accepts. The sequence is padding when its
start slot is -1. ``SPEC = 2`` is SGLang's target verify: indices ``[N]``, sequence n starts from
``h0[h0_idx[n]]`` and the state after its token t goes to a separate buffer at
``ht[ht_idx[n], t]`` (``STEPS`` rows per sequence, row stride ``ST_ROW``; none for row -1), so the
pool is only read (``kimiops/kda/verify.py``).

Padding (pool index -1, or any index <= ``PAD_SLOT``: 0 marks vLLM's null block as padding too): with
``SKIP_PADDED`` (decode) the sequence reads and writes no state and its output rows are exactly zero
(``tl.where``, so garbage or NaN padding inputs cannot leak); without it (prefill) it starts from a
zero state, computes outputs and writes nothing. With
``cu_seqlens``, output rows past ``cu_seqlens[N]`` (CUDA-graph padding tokens) are zero-filled.

Config tables (``_CONFIGS``): a :class:`TileConfig` by ``N * HV``, one for
the cu_seqlens form and one for batch mode (``[N, T, ...]`` without cu_seqlens), chosen from the sweep of
``benchmarks/bench_kda_decode.py`` (every (BV, num_warps) candidate per N; the winner is its
``best_cfg`` column) and ``benchmarks/tools/decode_config_ab.py`` (named configs per form, with the same
or cold pool slots); measurements cited next to the tables. ``early_inputs`` issues the first token's
loads before the state tile's in the source (ptxas keeps that order; see the batch table's comment).
``wait_first`` orders the two PDL instructions: wait for the previous grid, then let the next one
launch (otherwise the other way round; see the tables' comment).

Where the time of a small call goes (``benchmarks/results/logs_h200_20261130i/``): a chain of
calls that only wait for the previous grid, read the pool index, and read and write a 4 KiB tile
takes 1.65-1.73 us per call (``pdl_chain_floor.log``), a decode call at N = 1 ~3.0. Compiling parts
out (``decode_ablate.log``, branch ``exp/decode-ablate``): without o (its reduction, layout conversion
and store) 2.62 vs 3.16 us; o stored from its ``keep_dims`` sum instead of the 1-D slice saves part of
that (see the table's comment). Per-token math is not the bottleneck: without the L2 norm, sigmoid
and gate the call takes the same time (``logs_h200_20261130h/decode_latency_parts.log``).

Measured on the H200 and not kept (``benchmarks/results/logs_h200_20261130h/``, ``..._20261130i/``):
``o = (decay S)^T q + u (k . q)`` reduced beside the error (slower at every N; again with the L2
norms also taken off the path: N = 1 3.40 vs 3.27 us, ``r3_decode_variants.log``), the state stored
inside the token loop before o is reduced (N = 64 92.4% vs 92.8%), the first token's row loaded
before ``cu_seqlens`` arrives (N = 1 3.30 vs 3.13 us), the PDL trigger after the stores (N = 2 4.00
vs 3.72 us), a register cap of 64-80 for more one-warp CTAs per SM (spills: N = 64 91.9% -> 65-88%),
and a Gluon version with an explicit tile layout whose K reductions take 3 shuffles instead of 5
(branch ``exp/gluon-decode``; correct, but N = 1 4.04 vs 3.05 us and N = 64 80.7 vs 93.9%,
``r9_gluon_decode_check.log``). Eighteenth session (``logs_h200_20261130n/``, docs/history/decode.md): the
pool tile read before the PDL wait (N = 1 -0.5 us, but N = 8 +11% and a contract that two calls on
one pool back to back break) and an L2 prefetch of it before the wait (N = 1 -0.2 us over distinct
slots, N = 2 and N = 64 slower). Twenty-seventh session (``logs_h200_20261201f/``, docs/history/decode.md):
each speculative token's pool slot loaded a token ahead with its inputs (N = 1 8.88-8.96 vs
7.59-7.63 us, N = 64 197.5-197.6 vs 180.9-181.1) and a one-token specialization of batch mode (even).
Twenty-eighth session (``logs_h200_20261201g/`` run 2): the pool index loaded once instead of twice
for in-place updates (even: N = 1 3.11-3.21 vs 3.13-3.27 us).

Host side: the launcher does no device work besides allocating ``o`` (when ``out`` is None), no
``.item()`` and no host sync. After the first (JIT) launch of a specialization, later launches
skip Triton's argument binder and go straight to the compiled kernel's launcher (``kimiops.launch.FAST_LAUNCH``;
keyed on every property the specialization depends on: dtypes, constexprs, alignment of the state
pointers, device). Set ``KIMIOPS_TRITON_FAST_LAUNCH=0`` to always use Triton's own path. Eager calls
that repeat a signature (``kimiops.kda.runner``) reuse a ``BoundLaunch``; calls that differ only in
the batch size get one from an ``ElasticDecode`` (the same compiled kernel where the config table
gives the new ``N * HV`` the same config). Measured and not kept
there (fourteenth session, ``benchmarks/results/logs_h200_20261130j/r3_decode_host_gpu.log``,
``r4_decode_host_gpu.log``): small outputs handed out as views of a block of 32 preallocated ones
instead of ``torch.empty_like`` per call; 1.39 vs 1.78 us in one run, 2.89 vs 2.08 in the next
(the capture check and one view per call cost about what the allocation does), so no gain that
would pay for outputs sharing a block.

Programmatic dependent launch (``PDL``; families of ``kimiops.arch.supports_pdl``, off with
``KIMIOPS_PDL=0``): the grid is launched so that it may be scheduled while the previous kernel
on the stream finishes; every program waits (``gdc_wait``) for that kernel's completion before
its first memory access, so only launch latency and the previous grid's tail are overlapped.
Each program also releases the next grid (``gdc_launch_dependents``), before its wait or, with
``wait_first``, after it.
"""

from __future__ import annotations

import os
from typing import NamedTuple

import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice

import kimiops.launch as fast_launch
from kimiops.arch import supports_pdl
from kimiops.intmath import cdiv, next_power_of_2
from kimiops.kda.gate import LIBDEVICE, beta_from_logits_tl, kda_gate_tl, l2norm_tl
from kimiops.launch import RawLaunch, fast_launch_allowed, jit_launch

__all__ = ["recurrent_kda_fwd", "recurrent_kda_fwd_config", "config_for", "CONFIG_CANDIDATES", "BoundLaunch",
           "ElasticDecode", "TileConfig"]

# Programmatic dependent launch on the families that have it (``kimiops.arch.supports_pdl``);
# module attribute, read at call time, so the benchmark can compare both.
_PDL = os.environ.get("KIMIOPS_PDL", "1") == "1"


class TileConfig(NamedTuple):
    """How the decode kernel is launched for a batch size: ``block_v`` x ``num_warps`` CTAs, the
    state tile's streaming cache hints, the first token's loads ahead of the state tile's, and the
    PDL order (``wait_first``: wait for the previous grid before releasing the next)."""

    block_v: int
    num_warps: int
    stream_hints: bool = False
    early_inputs: bool = False
    wait_first: bool = False


# A TileConfig per upper bound of N*HV, one table per form of the call.
# First match wins; both state layouts use them (the K-first layout is not swept).
#
# The cu_seqlens form (_VARLEN_TABLE; also speculative verification and short prefill): BV x num_warps
# chosen by the sweep of benchmarks/bench_kda_decode.py on the H200 (2026-11-29, H=HV=32, K=V=128, fp32
# V-first pool, CUDA-graph medians with programmatic dependent launch, kda_decode_20261129-213241.json):
# from N=8 on 8x1 wins everywhere (N=8 8.37 us vs 9.20 for 32x4; N=512 95.6% of copy bandwidth vs
# 94.3%). Small tiles mean many CTAs in flight, which is what a bandwidth-bound stream of 64 KiB states
# needs. Rows checked by benchmarks/tools/decode_config_ab.py after o moved to its keep_dims store
# (2026-11-30, logs_h200_20261130i/decode_config_ab.log): N=1 on one warp (8x1 2.93 us, 8x2 3.15), N=2
# on two (8x2 3.69 us, 8x1 4.34). stream_hints (state tile loaded evict_first, stored .cs: it is read
# once and written once per call) only where they pay: N=32 90.6% vs 89.5% of copy bandwidth, N=64
# 93.0% vs 91.7%; at N=8 and N=128 they are even (7.93 vs 7.86 us, 94.0% vs 93.8%), at N=256 / 512 they
# cost 1.4 / 2.3 points.
#
# Batch mode (_BATCH_TABLE: [N, T, ...] without cu_seqlens, how KDABackend.decode and SGLang's
# packed_decode launch one token per request), logs_h200_20261201f. Until the twenty-seventh session the
# token pointers were computed after the state tile's load in the source; in batch mode (no cu_seqlens
# load to wait for) ptxas then issued their ~80 instructions of address arithmetic after the wait for
# the pool index and the first token's loads after those (offline SASS), and the form ran 0.6-1.6 us
# slower than the cu_seqlens form at N = 2..64 (run 1: N=8 8.87 vs 7.90 us, 12.30 vs 10.74 with cold
# slots). With the pointers first (this file; the cu_seqlens form's SASS opcodes are unchanged) the same
# configs gave N=8 8.01-8.03 / 10.46-10.51 us against 8.90-8.98 / 12.22-12.33 before (same slots /
# cold, run 4, two processes each, alternating). early_inputs also issues the first token's loads
# before the state tile's: N=4 16x2e 4.87-4.93 / 6.21-6.28 us against 16x2 5.53-5.57 / 6.73-6.77 and
# 8x1 5.24-5.29 / 6.90-6.96; N=8 8x1e 7.89-7.90 / 10.51-10.52 against 8x1 8.01-8.03 / 10.46-10.51;
# N=2 8x4 and 8x4e even (4.13-4.27 / 4.56-4.66, against 8x2 4.49-4.60 / 5.08-5.21); N=16 / 64 8x1he
# 0.0-0.2 us ahead of 8x1h (run 4; run 3 with benchmarks/tools/decode_config_ab.py
# --batch agrees, r3_batch_ab_*.log). At N=1 early loads were even or lost (run 3: 3.47 / 3.19 against
# 3.44 / 3.27; run 2: 3.22 vs 3.06 us); in the cu_seqlens form they lose (run 2: N=8 8.11 vs 7.90 us).
#
# PDL order (wait_first), twenty-eighth session (logs_h200_20261201g runs 2 and 3, both orders of the
# same kernel loaded in one process, best of 2-3 rounds, same / cold slots). Releasing the next grid
# before the wait (the default) let each grid of a chain launch the next one as soon as its programs
# start; waiting first, as vLLM's packed-decode kernel does, is faster at N*HV <= 32 in both forms:
# N=1 cu_seqlens 8x1 2.86 / 3.32 us against 3.07 / 3.33, batch mode 8x1 2.95 / 3.34 against 3.22 / 3.45
# (run 3; run 2: 2.89-3.01 against 3.13-3.27). From N=2 on it is mixed and loses with cold slots, which
# is how a model's layers meet their states: N=2 batch mode 8x4e 4.37 / 4.80 against 4.16 / 4.70, N=4
# 16x2e 5.12 / 6.60 against 4.96 / 6.46, N=8 cu_seqlens 8x1 7.87 / 10.91 against 8.10 / 10.73, N=16..512
# within 0.3 us or 0.2 points of copy bandwidth, most in favour of the default (r3_order_sweep.log).
_VARLEN_TABLE = ((32, TileConfig(8, 1, wait_first=True)), (64, TileConfig(8, 2)), (256, TileConfig(8, 1)),
                 (2048, TileConfig(8, 1, stream_hints=True)), (None, TileConfig(8, 1)))
_BATCH_TABLE = ((32, TileConfig(8, 1, wait_first=True)), (64, TileConfig(8, 4, early_inputs=True)),
                (128, TileConfig(16, 2, early_inputs=True)), (256, TileConfig(8, 1, early_inputs=True)),
                (2048, TileConfig(8, 1, stream_hints=True, early_inputs=True)),
                (None, TileConfig(8, 1, early_inputs=True)))
_CONFIGS = {True: _VARLEN_TABLE, False: _BATCH_TABLE}  # keyed by "called with cu_seqlens"
# what the benchmark sweeps
CONFIG_CANDIDATES = tuple(
    (bv, nw) for bv in (8, 16, 32, 64) for nw in (1, 2, 4, 8) if 8 <= bv * 128 // (32 * nw) <= 64
)

_INT_ARGS = [
    "N", "T", "s_idx",
    "s_qb", "s_qt", "s_qh", "s_kb", "s_kt", "s_kh", "s_vb", "s_vt", "s_vh",
    "s_gb", "s_gt", "s_gh", "s_bb", "s_bt", "s_bh", "s_ob", "s_ot", "s_oh",
]
# only the state tile loads/stores are bandwidth-critical; the other pointers carry no alignment
# specialization (keeps the fast-launch key small; their rows are short and latency-bound)
_UNALIGNED_PTRS = ["q", "k", "v", "g", "beta", "o", "h0_idx", "ht_idx", "cu_seqlens", "A_log", "dt_bias", "num_acc",
                   "parent"]


@triton.jit
def _token_inputs(p_q, p_k, p_g, p_v, p_b, t, s_qt, s_kt, s_gt, s_vt, s_bt, mask_k, mask_v, ok):
    """Token ``t``'s q, k, g ``[BK]``, v ``[BV]`` and beta (scalar) in their storage dtype from the
    row pointers of the program's heads; zeros where ``ok`` is false."""
    return (tl.load(p_q + t * s_qt, mask=mask_k & ok, other=0.0), tl.load(p_k + t * s_kt, mask=mask_k & ok, other=0.0),
            tl.load(p_g + t * s_gt, mask=mask_k & ok, other=0.0), tl.load(p_v + t * s_vt, mask=mask_v & ok, other=0.0),
            tl.load(p_b + t * s_bt, mask=ok, other=0.0))


# Head dims up to 32: the products of the reductions over K (the error's and o's) are rounded on their own
# (``mul.rn``, which neither LLVM nor ptxas contracts) before they are summed. Where a lane holds one element
# along K, LLVM otherwise fuses the product into the first butterfly step (lane i: fma(h_i, q_i,
# round(h_j q_j)), its partner the other way round), so the lanes' copies of the reduced value differ in their
# last bits, and a layout conversion that has all of them write one shared-memory address races: racecheck's
# write-after-write hazards on o's store at head dims of 16 (benchmarks/results/logs_20261206_s56/), and on
# the error's conversion at 16 and 32 with fp32 inputs, a V-first state and no initial state
# (logs_20261206_s57/, docs/history/decode.md). Wider heads keep the fused products: racecheck found no hazard there,
# nor does tests/kda/decode_reduction_ptx.py, and rounding them would change the bits and the timed kernel.
# The kernel tests ``ROUND_PRODUCTS`` at each reduction rather than calling a @triton.jit helper: through a
# helper, 4 of 20 configs at head dims 64 and 128 compiled to other SASS (cpu_checks_20261206_s57/
# decode_sass_compare.log).
_ROUND_PRODUCTS_MAX_BK = tl.constexpr(32)


@triton.jit(do_not_specialize=_INT_ARGS, do_not_specialize_on_alignment=_UNALIGNED_PTRS)
def _recurrent_kda_fwd_kernel(
    q, k, v, g, beta, o, h0, ht, h0_idx, ht_idx, cu_seqlens, A_log, dt_bias, num_acc, parent,
    scale: tl.float32, lower_bound: tl.float32,
    N: tl.int64, T: tl.int64, s_idx: tl.int64,
    s_qb: tl.int64, s_qt: tl.int64, s_qh: tl.int64,
    s_kb: tl.int64, s_kt: tl.int64, s_kh: tl.int64,
    s_vb: tl.int64, s_vt: tl.int64, s_vh: tl.int64,
    s_gb: tl.int64, s_gt: tl.int64, s_gh: tl.int64,
    s_bb: tl.int64, s_bt: tl.int64, s_bh: tl.int64,
    s_ob: tl.int64, s_ot: tl.int64, s_oh: tl.int64,
    HV: tl.constexpr, G: tl.constexpr, K: tl.constexpr, V: tl.constexpr,
    BK: tl.constexpr, BV: tl.constexpr, NV: tl.constexpr,
    S0_SLOT: tl.constexpr, S0_HEAD: tl.constexpr, ST_SLOT: tl.constexpr, ST_HEAD: tl.constexpr,
    V_FIRST: tl.constexpr, IS_VARLEN: tl.constexpr,
    HAS_H0: tl.constexpr, HAS_H0_IDX: tl.constexpr, HAS_HT: tl.constexpr, HAS_HT_IDX: tl.constexpr,
    INPLACE: tl.constexpr, SKIP_PADDED: tl.constexpr,
    USE_QK_L2NORM: tl.constexpr, USE_BETA_SIGMOID: tl.constexpr,
    USE_GATE: tl.constexpr, USE_LOWER_BOUND: tl.constexpr, HAS_A: tl.constexpr, HAS_DT_BIAS: tl.constexpr,
    EVEN_K: tl.constexpr, EVEN_V: tl.constexpr, PDL: tl.constexpr, STREAM_HINTS: tl.constexpr,
    NEG_EIGVAL: tl.constexpr, SPEC: tl.constexpr, HAS_NUM_ACC: tl.constexpr, STEPS: tl.constexpr,
    ST_ROW: tl.constexpr, HAS_PARENT: tl.constexpr, EARLY_INPUTS: tl.constexpr, WAIT_FIRST: tl.constexpr,
    PAD_SLOT: tl.constexpr,
):
    if PDL:
        # Programmatic dependent launch: this grid may be scheduled while the previous kernel on
        # the stream still runs. Wait until the previous one has finished and its writes are
        # visible (nothing is read before the wait), and allow the next kernel to be scheduled,
        # in the table's order.
        if WAIT_FIRST:
            tl.extra.cuda.gdc_wait()
            tl.extra.cuda.gdc_launch_dependents()
        else:
            tl.extra.cuda.gdc_launch_dependents()
            tl.extra.cuda.gdc_wait()
    pid = tl.program_id(0)
    i_v = pid % NV
    i_nh = pid // NV
    i_hv = i_nh % HV
    i_n = i_nh // HV
    i_h = i_hv // G
    n64 = i_n.to(tl.int64)

    # ---- sequence bounds and state slots (first-level loads, issued before anything else)
    if IS_VARLEN:
        bos = tl.load(cu_seqlens + i_n).to(tl.int64)
        eos = tl.load(cu_seqlens + i_n + 1).to(tl.int64)
    else:
        bos = T * 0
        eos = T
    i0 = n64
    row = n64
    if SPEC == 2:  # start slot h0_idx[n]; the writes go to ht[ht_idx[n], t] (row stride ST_ROW)
        i0 = tl.load(h0_idx + i_n).to(tl.int64)
        row = tl.load(ht_idx + i_n).to(tl.int64)
        i1 = i0
    elif SPEC:  # start slot idx[n, a_n - 1]; the writes go to idx[n, t] in the token loop
        first = n64 * 0
        if HAS_NUM_ACC:
            first = tl.load(num_acc + i_n).to(tl.int64) - 1
        i0 = tl.load(h0_idx + n64 * s_idx + first).to(tl.int64)
        i1 = i0
    else:
        if HAS_H0_IDX:
            i0 = tl.load(h0_idx + i_n).to(tl.int64)
        i1 = n64
        if HAS_HT_IDX:
            i1 = tl.load(ht_idx + i_n).to(tl.int64)
    read_ok = i0 > PAD_SLOT
    write_ok = i1 > PAD_SLOT
    live = read_ok & write_ok  # only meaningful with SKIP_PADDED: padding skips the sequence
    if SKIP_PADDED:
        read_ok = live
        write_ok = live
    if INPLACE:  # a zero-length sequence leaves its own slot as it is: skip the round trip
        read_ok = read_ok & (eos > bos)
        write_ok = write_ok & (eos > bos)

    # ---- tile coordinates
    ROUND_PRODUCTS: tl.constexpr = BK <= _ROUND_PRODUCTS_MAX_BK and LIBDEVICE  # the interpreter contracts nothing
    o_k = tl.arange(0, BK)
    o_v = i_v * BV + tl.arange(0, BV)
    if EVEN_K:
        mask_k = tl.full([BK], 1, tl.int1)
    else:
        mask_k = o_k < K
    if EVEN_V:
        mask_v = tl.full([BV], 1, tl.int1)
    else:
        mask_v = o_v < V
    if V_FIRST:
        offs_h = o_v[:, None] * K + o_k[None, :]
        mask_h = mask_v[:, None] & mask_k[None, :]
    else:
        offs_h = o_k[:, None] * V + o_v[None, :]
        mask_h = mask_k[:, None] & mask_v[None, :]

    # ---- token inputs; those of token t+1 are loaded before token t is computed. The 1-D
    # vectors are loaded one element per thread (coalesced; gate math there is cheapest) and the
    # compiler converts q, k, decay, v to the tile's broadcast layout (a few smem round trips).
    # The pointers come before the state tile's load: after it, ptxas placed their arithmetic behind
    # the wait for the pool index in batch mode (see the batch table).
    p_q = q + n64 * s_qb + i_h * s_qh + o_k
    p_k = k + n64 * s_kb + i_h * s_kh + o_k
    p_g = g + n64 * s_gb + i_hv * s_gh + o_k
    p_v = v + n64 * s_vb + i_hv * s_vh + o_v
    p_b = beta + n64 * s_bb + i_hv * s_bh
    p_o = o + n64 * s_ob + i_hv * s_oh + o_v
    if V_FIRST:
        p_o2 = p_o[:, None]
        mask_o2 = mask_v[:, None]
    else:
        p_o2 = p_o[None, :]
        mask_o2 = mask_v[None, :]
    if EARLY_INPUTS:  # the first token's inputs before the state tile (see the config table)
        c_q, c_k, c_g, c_v, c_b = _token_inputs(p_q, p_k, p_g, p_v, p_b, bos, s_qt, s_kt, s_gt, s_vt, s_bt,
                                                mask_k, mask_v, eos > bos)

    # ---- state tile
    if HAS_H0:
        p_h0 = h0 + i0 * S0_SLOT + i_hv * S0_HEAD + offs_h
        if STREAM_HINTS:  # read once per call: do not keep it in L2
            b_h = tl.load(p_h0, mask=mask_h & read_ok, other=0.0, eviction_policy="evict_first").to(tl.float32)
        else:
            b_h = tl.load(p_h0, mask=mask_h & read_ok, other=0.0).to(tl.float32)
    else:
        b_h = tl.zeros(offs_h.shape, dtype=tl.float32)

    # ---- per-head constants of the gate
    if USE_GATE:
        if HAS_A:
            b_A = tl.exp(tl.load(A_log + i_hv).to(tl.float32))
        else:
            b_A = 1.0
        if HAS_DT_BIAS:
            b_dt = tl.load(dt_bias + i_hv * K + o_k, mask=mask_k, other=0.0).to(tl.float32)

    if not EARLY_INPUTS:
        c_q, c_k, c_g, c_v, c_b = _token_inputs(p_q, p_k, p_g, p_v, p_b, bos, s_qt, s_kt, s_gt, s_vt, s_bt,
                                                mask_k, mask_v, eos > bos)

    # ---- token loop (a while loop: the form measured on the H200; the next token's loads are issued by hand)
    t = bos
    while t < eos:
        if HAS_PARENT:  # tree drafts (SPEC 2): token t continues from its parent's state, not t - 1's
            if t > bos:
                par = tl.load(parent + n64 * s_idx + (t - bos)).to(tl.int64)
                if par != t - bos - 1:
                    tl.debug_barrier()  # the buffer rows the CTA's threads stored are visible to all of them
                    if par < 0:
                        b_h = tl.load(p_h0, mask=mask_h & read_ok, other=0.0).to(tl.float32)
                    else:
                        p_par = ht + row * ST_ROW + par * ST_SLOT + i_hv * ST_HEAD + offs_h
                        b_h = tl.load(p_par, mask=mask_h & write_ok & (row >= 0), other=0.0).to(tl.float32)
        n_q, n_k, n_g, n_v, n_b = _token_inputs(p_q, p_k, p_g, p_v, p_b, t + 1, s_qt, s_kt, s_gt, s_vt, s_bt,
                                                mask_k, mask_v, t + 1 < eos)

        b_q = c_q.to(tl.float32)
        b_k = c_k.to(tl.float32)
        b_g = c_g.to(tl.float32)
        b_v = c_v.to(tl.float32)
        b_beta = c_b.to(tl.float32)
        if USE_QK_L2NORM:
            b_q = l2norm_tl(b_q, 0)
            b_k = l2norm_tl(b_k, 0)
        b_q = b_q * scale
        if USE_GATE:
            if HAS_DT_BIAS:
                b_g = b_g + b_dt
            b_g = kda_gate_tl(b_g, b_A, lower_bound, HAS_A, USE_LOWER_BOUND)
        b_decay = tl.exp(b_g)  # g <= 0
        if USE_BETA_SIGMOID:
            b_beta = beta_from_logits_tl(b_beta, NEG_EIGVAL)

        # o is reduced with keep_dims and stored from that 2-D shape: its layout conversion for the
        # store is cheaper than from the 1-D slice (N = 1 3.10-3.15 vs 3.27-3.31 us, N = 8 8.06-8.15
        # vs 8.45-8.50 us, ``logs_h200_20261130i/r3_decode_variants.log``)
        if V_FIRST:  # b_h [BV, BK]
            b_h = b_h * b_decay[None, :]
            if ROUND_PRODUCTS:
                b_err = b_v - tl.sum(libdevice.mul_rn(b_h, b_k[None, :]), axis=1)
            else:
                b_err = b_v - tl.sum(b_h * b_k[None, :], axis=1)
            b_h = b_h + (b_beta * b_err)[:, None] * b_k[None, :]
            if ROUND_PRODUCTS:
                b_o = tl.sum(libdevice.mul_rn(b_h, b_q[None, :]), axis=1, keep_dims=True)  # [BV, 1]
            else:
                b_o = tl.sum(b_h * b_q[None, :], axis=1, keep_dims=True)
        else:  # b_h [BK, BV]
            b_h = b_h * b_decay[:, None]
            if ROUND_PRODUCTS:
                b_err = b_v - tl.sum(libdevice.mul_rn(b_h, b_k[:, None]), axis=0)
            else:
                b_err = b_v - tl.sum(b_h * b_k[:, None], axis=0)
            b_h = b_h + b_k[:, None] * (b_beta * b_err)[None, :]
            if ROUND_PRODUCTS:
                b_o = tl.sum(libdevice.mul_rn(b_h, b_q[:, None]), axis=0, keep_dims=True)  # [1, BV]
            else:
                b_o = tl.sum(b_h * b_q[:, None], axis=0, keep_dims=True)
        if SKIP_PADDED:
            b_o = tl.where(live, b_o, 0.0)
        tl.store(p_o2 + t * s_ot, b_o.to(o.dtype.element_ty), mask=mask_o2)
        if SPEC == 2:  # into the caller's buffer, not the pool (SGLang's target verify)
            # the row stride is a constexpr like the slot strides: as a runtime int (not specialized,
            # so no known divisibility) the same step ran 2-44% slower (logs_h200_20261201d runs 5, 7)
            p_st = ht + row * ST_ROW + (t - bos) * ST_SLOT + i_hv * ST_HEAD + offs_h
            tl.store(p_st, b_h.to(ht.dtype.element_ty), mask=mask_h & write_ok & (row >= 0) & (t - bos < STEPS))
        elif SPEC:  # the state after this token, for the engine to resume from if it accepts it
            slot = tl.load(ht_idx + n64 * s_idx + (t - bos)).to(tl.int64)
            p_st = ht + slot * ST_SLOT + i_hv * ST_HEAD + offs_h
            tl.store(p_st, b_h.to(ht.dtype.element_ty), mask=mask_h & write_ok & (slot > PAD_SLOT))

        c_q = n_q
        c_k = n_k
        c_g = n_g
        c_v = n_v
        c_b = n_b
        t += 1

    # ---- final state
    if HAS_HT and not SPEC:
        p_ht = ht + i1 * ST_SLOT + i_hv * ST_HEAD + offs_h
        if STREAM_HINTS:  # written once per call: streaming store
            tl.store(p_ht, b_h.to(ht.dtype.element_ty), mask=mask_h & write_ok, cache_modifier=".cs")
        else:
            tl.store(p_ht, b_h.to(ht.dtype.element_ty), mask=mask_h & write_ok)

    # ---- rows past cu_seqlens[N] (CUDA-graph padding tokens): zeros, written by the last sequence
    if IS_VARLEN:
        tail = tl.where(i_n == N - 1, eos, T)
        b_zero = tl.zeros([BV], dtype=tl.float32).to(o.dtype.element_ty)
        t = tail
        while t < T:
            tl.store(p_o + t * s_ot, b_zero, mask=mask_v)
            t += 1


def config_for(nh: int, varlen: bool) -> TileConfig:
    """The :class:`TileConfig` from the table of the call's form (``varlen``: with cu_seqlens) for
    ``nh = N * HV`` programs per tile column."""
    for bound, cfg in _CONFIGS[bool(varlen)]:
        if bound is None or nh <= bound:
            return cfg
    raise AssertionError("unreachable")


_launch_cache: dict = {}


def recurrent_kda_fwd(
    q, k, v, g, beta, *, scale, cu_seqlens, h0, h0_indices, ht, ht_indices, state_v_first, use_qk_l2norm,
    use_beta_sigmoid, gate, A_log, dt_bias, lower_bound, skip_padded, out=None, bind=None,
    allow_neg_eigval=False, num_accepted=None, token_steps=0, parents=None, pad_slot_id=-1,
) -> torch.Tensor:
    """Recurrent KDA forward over a state pool (decode, speculative verification, short prefill).

    Inputs are assumed validated by the caller.

    Args:
        q, k: ``[B, T, H, K]``; v: ``[B, T, HV, V]``; g: ``[B, T, HV, K]`` (log decay for
            ``gate="none"``, raw logits otherwise); beta: ``[B, T, HV]`` (logits with
            ``use_beta_sigmoid``). fp16/bf16/fp32, last dim stride 1; other strides arbitrary
            (passed to the kernel, no copies).
        scale: multiplier of q (after the L2 norm).
        cu_seqlens: None, or int32/int64 ``[N+1]`` with ``B == 1``. Zero-length sequences allowed;
            several tokens per sequence allowed. Output rows past ``cu_seqlens[N]`` are zeroed.
        h0: None or the initial states ``[S0, HV, K, V]`` (``[S0, HV, V, K]`` with
            ``state_v_first``), fp32 or bf16; each ``[K, V]`` / ``[V, K]`` matrix must be
            contiguous (slot and head strides arbitrary). Sequence n reads
            ``h0[h0_indices[n]]`` (int32/int64 ``[N]``), or ``h0[n]`` without indices.
        ht: None or the final-state tensor, same layout rules (may be ``h0`` itself: in-place
            pool update). Sequence n writes ``ht[ht_indices[n]]`` (or ``ht[n]``).
            Speculative verification: ``h0_indices`` two-dimensional ``[N, T_max]`` (stride 1
            along T_max), then ``ht`` must be ``h0`` and ``ht_indices`` ``h0_indices``: sequence n
            reads slot ``[n, num_accepted[n] - 1]`` (``[n, 0]`` without ``num_accepted``) and
            writes the state after its token t to slot ``[n, t]`` (none where it is -1).
            With ``token_steps`` > 0 (SGLang's target verify) ``ht`` is instead a buffer
            ``[rows, token_steps, HV, K, V]`` (``[.., V, K]``; row stride arbitrary) and
            ``ht_indices`` int32/int64 ``[N]`` its rows: sequence n starts from
            ``h0[h0_indices[n]]`` (-1: padding) and writes the state after its token t < token_steps
            to ``ht[ht_indices[n], t]`` (none for row -1); no final state is written. With
            ``parents`` (int32/int64 ``[N, >= token_steps]``, stride 1 along tokens; tree drafts)
            token t > 0 continues from the state after token ``parents[n, t]`` (read back from the
            buffer; -1: from ``h0``) instead of token t - 1's.
        state_v_first: state layout (see above).
        use_qk_l2norm, use_beta_sigmoid: in-kernel preprocessing; ``allow_neg_eigval``: beta is
            ``2 sigmoid`` of the logits (needs ``use_beta_sigmoid``).
        num_accepted: None or int32/int64 ``[N]`` (see above).
        gate: ``"none"``, ``"softplus"`` (A_log ``[HV]`` required, dt_bias ``[HV*K]`` optional) or
            ``"lower_bound"`` (``lower_bound`` float in [-5, 0), A_log / dt_bias optional).
        skip_padded: meaning of index -1 (in either index tensor). True: the sequence is skipped,
            no state read or write, output rows exactly zero. False: start from zeros (h0 index
            -1), compute outputs, write nothing (ht index -1).
        pad_slot_id: -1, or 0 (vLLM's null block): every pool index <= it means what -1 does
            (per-token slots of speculative verification too). 0 needs ``h0_indices`` and, with
            ``ht``, ``ht_indices`` (without indices, sequence 0 would be skipped); the public call
            checks it (``kimiops.kda.args.check_pad_slot_id``).
        out: optional preallocated ``[B, T, HV, V]`` output in v's dtype (last dim stride 1).
        bind: optional list; when the fast launch path ran, a :class:`BoundLaunch` that repeats
            this launch for tensors of the same metadata is appended to it.
    Returns:
        o ``[B, T, HV, V]`` in v's dtype.
    """
    B = q.shape[0]
    HV = v.shape[2]
    N = B if cu_seqlens is None else cu_seqlens.shape[0] - 1
    cfg = config_for(N * HV, cu_seqlens is not None)
    return _launch(
        q, k, v, g, beta, scale, cu_seqlens, h0, h0_indices, ht, ht_indices, state_v_first, use_qk_l2norm,
        use_beta_sigmoid, gate, A_log, dt_bias, lower_bound, skip_padded, out, cfg, bind,
        allow_neg_eigval, num_accepted, token_steps, parents, pad_slot_id,
    )


def recurrent_kda_fwd_config(
    block_v, num_warps, q, k, v, g, beta, *, scale, cu_seqlens, h0, h0_indices, ht, ht_indices, state_v_first,
    use_qk_l2norm, use_beta_sigmoid, gate, A_log, dt_bias, lower_bound, skip_padded, out=None, stream_hints=False,
    early_inputs=False, wait_first=False, allow_neg_eigval=False, num_accepted=None, pad_slot_id=-1,
) -> torch.Tensor:
    """:func:`recurrent_kda_fwd` with an explicit :class:`TileConfig` (its fields as arguments)
    instead of the table (sweeps, tests)."""
    return _launch(
        q, k, v, g, beta, scale, cu_seqlens, h0, h0_indices, ht, ht_indices, state_v_first, use_qk_l2norm,
        use_beta_sigmoid, gate, A_log, dt_bias, lower_bound, skip_padded, out,
        TileConfig(block_v, num_warps, bool(stream_hints), bool(early_inputs), bool(wait_first)),
        allow_neg_eigval=allow_neg_eigval, num_accepted=num_accepted, pad_slot_id=pad_slot_id,
    )


def _state_strides(name, s, state_v_first, K, V):
    st = s.stride()
    inner = K if state_v_first else V
    if st[3] != 1 or st[2] != inner:
        raise ValueError(
            f"{name}: each state matrix must be contiguous ({'[V, K]' if state_v_first else '[K, V]'} with "
            f"strides ({inner}, 1)), got strides {st}"
        )
    return st[0], st[1]


class BoundLaunch:
    """One launch of the compiled decode kernel with everything but the tensors fixed: shapes,
    strides, dtypes, flags, scalars and the device were those of the call that built it, and the
    caller guarantees the same for every later call (see ``kimiops.kda.runner``). Calling it
    allocates ``o`` and launches; it returns ``None`` (caller falls back to the full path) when
    the current device changed, a launch hook (profiler) is registered or the fast launch path was
    switched off (``kimiops.launch.FAST_LAUNCH``)."""

    __slots__ = ("raw", "grid", "tail", "device", "gate", "has_h0", "has_ht", "entry", "head")

    def __init__(self, raw, grid, tail, device, gate, has_h0, has_ht):
        self.raw, self.grid, self.tail, self.device = raw, grid, tail, device
        self.gate, self.has_h0, self.has_ht = gate, has_h0, has_ht
        self.entry, self.head = raw.entry, raw.head  # the raw launch's call, made here without its frame

    def __call__(self, q, k, v, g, beta, h0, h0_indices, ht, ht_indices, cu_seqlens, A_log, dt_bias,
                 num_accepted=None):
        if not fast_launch.FAST_LAUNCH or torch._C._cuda_getDevice() != self.device or not fast_launch_allowed():
            return None
        o = _new_output(v)  # as _launch allocates it: same strides as the bound launch's
        if not self.gate:
            A_log = dt_bias = None
        # Raw addresses, not tensors: for a tensor argument Triton's launcher asks the driver to
        # validate the pointer (cuPointerGetAttribute), which cost more than the launch itself on
        # the H200 host; the call that built this launch validated devices and dtypes already.
        self.entry(self.grid, 1, 1, torch._C._cuda_getCurrentRawStream(self.device), *self.head,
                   q.data_ptr(), k.data_ptr(), v.data_ptr(), g.data_ptr(), beta.data_ptr(), o.data_ptr(),
                   None if h0 is None else h0.data_ptr(), None if ht is None else ht.data_ptr(),
                   h0_indices.data_ptr() if self.has_h0 and h0_indices is not None else None,
                   ht_indices.data_ptr() if self.has_ht and ht_indices is not None else None,
                   None if cu_seqlens is None else cu_seqlens.data_ptr(),
                   None if A_log is None else A_log.data_ptr(), None if dt_bias is None else dt_bias.data_ptr(),
                   None if num_accepted is None else num_accepted.data_ptr(), None, *self.tail)
        return o


# positions of the kernel's N and T in a bound launch's ``tail`` (the arguments from ``scale`` on)
_TAIL_N = _recurrent_kda_fwd_kernel.arg_names.index("N") - _recurrent_kda_fwd_kernel.arg_names.index("scale")
_TAIL_T = _TAIL_N + 1


class ElasticDecode:
    """Bound launches of one decode signature at any batch size: the calls it serves differ from
    the recorded one only in the sequence count ``N`` (and with ``cu_seqlens`` the token count
    ``T``); the caller (``kimiops.kda.runner``) guarantees the rest: flags, dtypes, head sizes, the
    strides of every dimension that does not follow N or T. Serving engines that run decode
    eagerly (vLLM's ``--enforce-eager``, SGLang without graphs) change N whenever a request joins
    or leaves, which an exact :class:`BoundLaunch` never repeats.

    The kernel takes N and T as unspecialized integers (``_INT_ARGS``), so a call at another N
    runs the same compiled kernel with N, T and the grid (``NV * N * HV`` programs) changed, as
    long as the config table (``config_for``) gives ``N * HV`` the recorded config; another config
    is another compiled kernel (``variants``: config -> the bound launch recorded with it;
    :meth:`learn` adds those of another recording)."""

    __slots__ = ("variants", "HV", "varlen")
    layout = None  # one layout per signature (``runner.remember_eager`` replaces entries of a layout)
    repeats_recorded_shapes = False  # the runner keeps exact entries beside it (made by bound_for)

    def __init__(self, bound: BoundLaunch, cfg: TileConfig, HV: int, varlen: bool):
        self.variants, self.HV, self.varlen = {cfg: bound}, HV, varlen

    def learn(self, other: "ElasticDecode") -> None:
        """Add the configs another recording of the same signature has bound."""
        for cfg, bound in other.variants.items():
            self.variants.setdefault(cfg, bound)

    def bound_for(self, N: int, T: int) -> BoundLaunch | None:
        """The launch of a call with ``N`` sequences and ``T = q.shape[1]`` (the kernel's T: tokens
        per sequence in batch mode, all tokens with cu_seqlens), or ``None`` where the table gives
        ``N * HV`` a config not recorded yet (the full path then runs). ``N``, ``T`` >= 1."""
        bound = self.variants.get(config_for(N * self.HV, self.varlen))
        if bound is None:
            return None
        tail = list(bound.tail)
        per_sequence = bound.grid // tail[_TAIL_N]  # NV * HV programs
        tail[_TAIL_N], tail[_TAIL_T] = N, T
        return BoundLaunch(bound.raw, per_sequence * N, tuple(tail), bound.device, bound.gate, bound.has_h0,
                           bound.has_ht)


def _new_output(v):
    """``o``: a contiguous tensor of v's shape ``[B, T, HV, V]`` and dtype. ``torch.empty_like``
    costs ~1/4 of ``torch.empty(shape, dtype=, device=)`` on the H200 host (1.74 vs 7.54 us,
    ``benchmarks/results/logs_h200_20261130i/decode_host_gpu_before.log``); without a
    memory-format argument it is cheaper still, and for contiguous v it is contiguous."""
    if v.is_contiguous():
        return torch.empty_like(v)
    return torch.empty_like(v, memory_format=torch.contiguous_format)


def _launch(
    q, k, v, g, beta, scale, cu_seqlens, h0, h0_indices, ht, ht_indices, state_v_first, use_qk_l2norm,
    use_beta_sigmoid, gate, A_log, dt_bias, lower_bound, skip_padded, out, cfg, bind=None,
    allow_neg_eigval=False, num_accepted=None, token_steps=0, parents=None, pad_slot_id=-1,
):
    B, T, H, K = q.shape
    HV, V = v.shape[2], v.shape[3]
    varlen = cu_seqlens is not None
    N = cu_seqlens.shape[0] - 1 if varlen else B
    o = out if out is not None else _new_output(v)
    if N == 0 or HV == 0:
        if o.numel():
            o.zero_()
        return o

    use_gate = gate != "none"
    if use_gate and gate not in ("softplus", "lower_bound"):
        raise ValueError(f"gate: expected 'none', 'softplus' or 'lower_bound', got {gate!r}")
    use_lb = gate == "lower_bound"
    if gate == "softplus" and A_log is None:
        raise ValueError("A_log: the softplus gate needs A_log [HV], got None")
    if not use_gate:
        A_log = dt_bias = None
    has_h0, has_ht = h0 is not None, ht is not None
    if not has_h0:
        h0_indices = None
    if not has_ht:
        ht_indices = None
    s0_slot, s0_head = _state_strides("h0", h0, state_v_first, K, V) if has_h0 else (0, 0)
    st_row = 0
    if token_steps:  # ht: a buffer [rows, token_steps, HV, ...] of per-token states
        if not (has_h0 and has_ht and h0_indices is not None and ht_indices is not None and ht.dim() == 5
                and h0_indices.dim() == 1 and ht_indices.dim() == 1 and num_accepted is None):
            raise ValueError("token_steps: needs h0 with h0_indices [N], a buffer ht [rows, token_steps, HV, *, *] "
                             "with ht_indices [N], and no num_accepted")
        st = ht.stride()
        if st[4] != 1 or st[3] != (K if state_v_first else V):
            raise ValueError(f"ht: each state matrix of the buffer must be contiguous, got strides {st}")
        st_row, st_slot, st_head = st[0], st[1], st[2]
    else:
        st_slot, st_head = _state_strides("ht", ht, state_v_first, K, V) if has_ht else (0, 0)
    if parents is not None and not (token_steps and parents.dim() == 2 and parents.stride(1) == 1):
        raise ValueError("parents: needs token_steps and [N, T_max] indices with stride 1 along tokens")
    inplace = has_h0 and ht is h0 and ht_indices is h0_indices
    spec = 2 if token_steps else int(h0_indices is not None and h0_indices.dim() == 2)
    if spec == 1 and not (inplace and (h0_indices.stride(1) == 1 or h0_indices.shape[1] == 1)):
        raise ValueError("h0_indices: two-dimensional indices (speculative verification) need ht is h0, "
                         "ht_indices is h0_indices and stride 1 along tokens")
    if num_accepted is not None and not spec:
        raise ValueError("num_accepted: expected None unless the indices are two-dimensional [N, T_max]")
    pdl = _PDL and supports_pdl(q.device)

    BK = next_power_of_2(K)
    bv, nw = min(cfg.block_v, next_power_of_2(V)), cfg.num_warps
    NV = cdiv(V, bv)
    qs, ks, vs, gs, bs, os_ = q.stride(), k.stride(), v.stride(), g.stride(), beta.stride(), o.stride()
    if varlen:  # B == 1: the batch stride must not move sequences
        sqb = skb = svb = sgb = sbb = sob = 0
    else:
        sqb, skb, svb, sgb, sbb, sob = qs[0], ks[0], vs[0], gs[0], bs[0], os_[0]
    cex = (
        HV, HV // H, K, V, BK, bv, NV, s0_slot, s0_head, st_slot, st_head,
        bool(state_v_first), varlen, has_h0, h0_indices is not None, has_ht, ht_indices is not None,
        inplace, bool(skip_padded), bool(use_qk_l2norm), bool(use_beta_sigmoid),
        use_gate, use_lb, use_gate and A_log is not None, dt_bias is not None,
        BK == K, V % bv == 0, pdl, cfg.stream_hints, bool(allow_neg_eigval), spec, num_accepted is not None,
        int(token_steps), st_row, parents is not None, cfg.early_inputs, cfg.wait_first, int(pad_slot_id),
    )
    args = (
        q, k, v, g, beta, o, h0, ht, h0_indices, ht_indices, cu_seqlens, A_log, dt_bias, num_accepted, parents,
        float(scale), float(lower_bound) if use_lb else 0.0,
        N, B * T if varlen else T,
        h0_indices.stride(0) if spec == 1 else parents.stride(0) if parents is not None else 0,
        sqb, qs[1], qs[2], skb, ks[1], ks[2], svb, vs[1], vs[2],
        sgb, gs[1], gs[2], sbb, bs[1], bs[2], sob, os_[1], os_[2],
        *cex,
    )
    grid0 = NV * N * HV

    if fast_launch.FAST_LAUNCH:
        dev = torch._C._cuda_getDevice()  # the raw queries of kimiops.launch (what Triton's driver reads)
        key = (
            dev, cex, nw,
            q.dtype, k.dtype, v.dtype, g.dtype, beta.dtype, o.dtype,
            None if h0 is None else (h0.dtype, h0.data_ptr() % 16 == 0),
            None if ht is None else (ht.dtype, ht.data_ptr() % 16 == 0),
            None if h0_indices is None else h0_indices.dtype,
            None if ht_indices is None else ht_indices.dtype,
            None if cu_seqlens is None else cu_seqlens.dtype,
            None if A_log is None else A_log.dtype,
            None if dt_bias is None else dt_bias.dtype,
            None if num_accepted is None else num_accepted.dtype,
            None if parents is None else parents.dtype,
        )
        hit = _launch_cache.get(key)
        if hit is not None and fast_launch_allowed():
            hit(grid0, 1, 1, torch._C._cuda_getCurrentRawStream(dev),
                *(a.data_ptr() if isinstance(a, torch.Tensor) else a for a in args[:15]), *args[15:])
        else:
            ck = jit_launch(_recurrent_kda_fwd_kernel, (grid0,), args, dict(num_warps=nw, num_stages=1, launch_pdl=pdl))
            if ck is not None and getattr(ck, "packed_metadata", None) is not None and ck.function is not None:
                hit = _launch_cache[key] = RawLaunch(ck)
        if bind is not None and hit is not None and out is None:
            bound = BoundLaunch(hit, grid0, args[15:], dev, use_gate, has_h0, has_ht)
            bind.extend((bound, ElasticDecode(bound, cfg, HV, varlen)))
        return o

    jit_launch(_recurrent_kda_fwd_kernel, (grid0,), args, dict(num_warps=nw, num_stages=1, launch_pdl=pdl))
    return o
