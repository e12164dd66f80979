"""The state stage's wide tile in Gluon (Hopper): ``chunk_state_kernel`` with its off-chain
tensor-core products asynchronous. Opt-in (``STATE_CONFIG_WIDE["gluon"]``), off by default until an
H200 run says it pays: written in the thirty-ninth session without a GPU (offline sm_90 compile only).

What it computes is ``chunk_state.py``'s (read its module docstring): per sequence, value head and
64 state columns, the chunk walk ``u^T = v^T tb^T``, ``v'^T = u^T - S^T w^T``, ``o^T = S^T qg^T +
v'^T A_qk^T``, ``S^T = S^T diag(gC) + v'^T kg`` with the wide config's numerics (fp16 hi / lo splits
with power-of-two row scales, ``S^T w^T`` and the output on the hi halves, the state update on both,
u in tf32, fp32 accumulation), so its results match the Triton kernel's to rounding order.

Why: the Triton kernel waits for each of its six wgmma groups per chunk step as it issues them (a
``tl.dot`` outside a pipelined matmul loop), one warp per scheduler, so each step (~1.24 us at B1
T8192, ~2,460 cycles for 783 instructions per warp) mostly waits; only ``S^T w^T`` and ``v'^T kg``
are on the recurrence's chain. Here a step issues u, ``S^T w^T`` and ``S^T qg^T``, waits until the
first two are done, splits v', issues ``v'^T A_qk^T`` and ``v'^T kg`` (hi, lo) and waits once more:
two waits per step (offline sm_90: ``benchmarks/results/cpu_checks_20261202_s39/``).

Grid ``(HV, V // 64, N)`` (``(V // 64, HV, N)`` with V tiles adjacent), 4 warps (one warpgroup), the
state ``S^T [64, K]`` fp32 in the accumulator layout. The scratch tiles of a chunk (w, qg, kg
``[C, K]`` fp16, tb ``[C, C]`` fp32, A_qk ``[C, C]`` fp16) and v's ``[C, 64]`` tile come by TMA into a
ring of ``STAGES`` chunks, one mbarrier each; v's rows past the sequence's end are zeroed after the
load (they belong to the next sequence). Supports what the wide launches of ``_launch_state`` use:
varlen (longest first via ``order``), pools with indices, V-first states, pipelined parts (carry)
and PDL. Not: segments (few heads), state snapshots (``track``), fp32 v, K or V not multiples of 64
(the launcher keeps the Triton kernel there).
"""

from __future__ import annotations

import torch

# helpers shared with the Triton kernel (a Gluon kernel may call @triton.jit functions: sequence
# spans, slots, parts, state offsets and the fp16 row splits, on tensors that carry their layouts)
from kimiops.kda.kernels.chunk_state import (_part_window, _sequence_slots, _split_f16_rows, _state_offsets,
                                             _state_slot)

try:  # Gluon is Triton's experimental layer (triton >= 3.5); kimiops imports without it
    from triton.experimental import gluon
    from triton.experimental.gluon import language as gl
    from triton.experimental.gluon.language.nvidia.hopper import (fence_async_shared, mbarrier, tma,
                                                                   warpgroup_mma, warpgroup_mma_wait)
    from triton.experimental.gluon.nvidia.hopper import TensorDescriptor
    from triton.language.extra.cuda import gdc_launch_dependents, gdc_wait
except ImportError:  # pragma: no cover - depends on the installed triton
    gluon = None

BV = 64  # state columns per program: one warpgroup's wgmma rows

if gluon is not None:
    _BV = gl.constexpr(BV)

    @gluon.jit
    def _tile_offsets(vb, K: gl.constexpr, V: gl.constexpr, L: gl.constexpr, STATE_V_FIRST: gl.constexpr):
        """``chunk_state._state_offsets`` of the state columns ``vb * 64 ..`` in layout ``L``."""
        rk = gl.arange(0, K, layout=gl.SliceLayout(0, L))
        rv = vb * _BV + gl.arange(0, _BV, layout=gl.SliceLayout(1, L))
        return _state_offsets(rv, rk, K, V, STATE_V_FIRST)

    @gluon.jit
    def _load_chunk(w_d, qg_d, kg_d, tb_d, aqk_d, v_d, row_ck, row_cc, tok, vcol, bar, ring, j, pred):
        """TMA of one chunk's tiles into slot ``j`` of the ring, completing on ``bar``."""
        nbytes: gl.constexpr = (3 * w_d.block_type.nbytes + tb_d.block_type.nbytes + aqk_d.block_type.nbytes
                                + v_d.block_type.nbytes)
        w_s, qg_s, kg_s, tb_s, aqk_s, v_s = ring
        mbarrier.expect(bar, nbytes, pred=pred)
        tma.async_copy_global_to_shared(w_d, [row_ck, 0], bar, w_s.index(j), pred=pred)
        tma.async_copy_global_to_shared(qg_d, [row_ck, 0], bar, qg_s.index(j), pred=pred)
        tma.async_copy_global_to_shared(kg_d, [row_ck, 0], bar, kg_s.index(j), pred=pred)
        tma.async_copy_global_to_shared(tb_d, [row_cc, 0], bar, tb_s.index(j), pred=pred)
        tma.async_copy_global_to_shared(aqk_d, [row_cc, 0], bar, aqk_s.index(j), pred=pred)
        tma.async_copy_global_to_shared(v_d, [tok, vcol], bar, v_s.index(j), pred=pred)

    @gluon.jit
    def chunk_state_gluon_kernel(
        w_d, qg_d, kg_d, tb_d, aqk_d, v_d, gc, o, h0, h0_indices, ht, ht_indices, cu_seqlens, order, carry,
        rows_ck, rows_cc, s_gc, s_carry, T, NT, slot_lo, slot_hi,
        HV: gl.constexpr, K: gl.constexpr, V: gl.constexpr, C: gl.constexpr,
        STATE_V_FIRST: gl.constexpr, HAS_H0: gl.constexpr, HAS_H0_IDX: gl.constexpr,
        HAS_HT: gl.constexpr, HAS_HT_IDX: gl.constexpr, IS_VARLEN: gl.constexpr, ORDERED: gl.constexpr,
        V_TILES_ADJACENT: gl.constexpr, PARTED: gl.constexpr, PDL: gl.constexpr, STAGES: gl.constexpr,
    ):
        """``*_d``: TMA descriptors of the scratch tiles as 2-D row views (``rows_ck`` / ``rows_cc``
        rows per head) and of v as ``[tokens, HV * V]``; o ``[tokens, HV, V]``; states and ``carry``
        as ``chunk_state_kernel`` takes them (``PARTED``: chunk slots ``[slot_lo, slot_hi)`` only)."""
        if PDL:
            gdc_launch_dependents()
            gdc_wait()
        if V_TILES_ADJACENT:
            vb = gl.program_id(0)
            hv = gl.program_id(1)
        else:
            hv = gl.program_id(0)
            vb = gl.program_id(1)
        n = gl.program_id(2)
        if ORDERED:
            n = gl.load(order + n)
        bos, eos, slot0 = _sequence_slots(cu_seqlens, n, T, NT, C, IS_VARLEN)
        nch = gl.cdiv(eos - bos, C)
        c_lo = nch * 0
        c_hi = nch
        starts_here = True
        ends_here = True
        if PARTED:
            last, starts_here, ends_here, c_lo, c_hi = _part_window(slot0, nch, slot_lo, slot_hi)
            if (slot0 >= slot_hi) | (last < slot_lo):
                return

        L_K: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[4, 1], instr_shape=[16, K, 16])
        L_C: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[4, 1], instr_shape=[16, C, 16])
        L_C8: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[4, 1], instr_shape=[16, C, 8])
        A_K16: gl.constexpr = gl.DotOperandLayout(operand_index=0, parent=L_K, k_width=2)
        A_C16: gl.constexpr = gl.DotOperandLayout(operand_index=0, parent=L_C, k_width=2)
        A_C32: gl.constexpr = gl.DotOperandLayout(operand_index=0, parent=L_C8, k_width=1)  # tf32: k = 8
        # o is stored from a layout whose lanes run along V (o's contiguous axis)
        O_L: gl.constexpr = gl.BlockedLayout(size_per_thread=[2, 1], threads_per_warp=[32, 1], warps_per_cta=[1, 4],
                                             order=[0, 1])

        hv64 = hv.to(gl.int64)
        n64 = n.to(gl.int64)
        rk = gl.arange(0, K, layout=gl.SliceLayout(0, L_K))
        st = gl.zeros([_BV, K], gl.float32, L_K)                                     # S^T
        # (the state's offsets are formed where they are used: held across the loop they spilled)
        if HAS_H0:
            if starts_here:
                i0 = _state_slot(h0_indices, n, HAS_H0_IDX)
                if i0 >= 0:
                    h0_tile = h0 + (i0 * HV + hv64) * K * V + _tile_offsets(vb, K, V, L_K, STATE_V_FIRST)
                    st = gl.load(h0_tile).to(gl.float32)
        if PARTED:
            if slot0 < slot_lo:  # written by another launch
                st = gl.load(carry + hv64 * s_carry + n64 * K * V + _tile_offsets(vb, K, V, L_K, False),
                             cache_modifier=".cg")

        ring = (gl.allocate_shared_memory(gl.float16, [STAGES, C, K], w_d.layout),
                gl.allocate_shared_memory(gl.float16, [STAGES, C, K], qg_d.layout),
                gl.allocate_shared_memory(gl.float16, [STAGES, C, K], kg_d.layout),
                gl.allocate_shared_memory(gl.float32, [STAGES, C, C], tb_d.layout),
                gl.allocate_shared_memory(gl.float16, [STAGES, C, C], aqk_d.layout),
                gl.allocate_shared_memory(v_d.dtype, [STAGES, C, _BV], v_d.layout))
        w_s, qg_s, kg_s, tb_s, aqk_s, v_s = ring
        ready = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
        for j in gl.static_range(STAGES):
            mbarrier.init(ready.index(j), count=1)
        fence_async_shared()
        r_ck = hv * rows_ck + slot0 * C
        r_cc = hv * rows_cc + slot0 * C
        vcol = hv * V + vb * _BV
        for j in gl.static_range(STAGES):
            c = c_lo + j
            _load_chunk(w_d, qg_d, kg_d, tb_d, aqk_d, v_d, r_ck + c * C, r_cc + c * C, bos + c * C, vcol,
                        ready.index(j), ring, j, c < c_hi)

        rc_v = gl.arange(0, C, layout=gl.SliceLayout(0, A_C32))
        rv_o = vb * _BV + gl.arange(0, _BV, layout=gl.SliceLayout(1, O_L))
        rc_o = gl.arange(0, C, layout=gl.SliceLayout(0, O_L))
        zero_c = gl.zeros([_BV, C], gl.float32, L_C)
        zero_c8 = gl.zeros([_BV, C], gl.float32, L_C8)
        zero_k = gl.zeros([_BV, K], gl.float32, L_K)
        for c in range(c_lo, c_hi):
            i = c - c_lo
            s = i % STAGES
            mbarrier.wait(ready.index(s), (i // STAGES) & 1)
            left = eos - bos - c * C                                                # rows of this chunk in the sequence
            vt = v_s.index(s).permute((1, 0)).load(A_C32)                           # v^T [_BV, C]
            vt = gl.where(gl.expand_dims(rc_v < left, 0), vt.to(gl.float32), 0.0)
            u_t = warpgroup_mma(vt, tb_s.index(s).permute((1, 0)), zero_c8, is_async=True)
            s_hi, s_lo, inv_s = _split_f16_rows(st, True)
            a_s = gl.convert_layout(s_hi, A_C16)
            ws_t = warpgroup_mma(a_s, w_s.index(s).permute((1, 0)), zero_c, is_async=True)
            qs_t = warpgroup_mma(a_s, qg_s.index(s).permute((1, 0)), zero_c, is_async=True)
            inv_s = gl.convert_layout(inv_s, gl.SliceLayout(1, L_C))  # the same rows per thread in L_K and L_C
            # groups complete in order: u and S^T w^T are done, S^T qg^T may still run. A wgmma's
            # register operands must not be overwritten before it completes (PTX ISA, wgmma.mma_async),
            # so each wait lists them: the compiler keeps them live up to it
            u_t, ws_t, vt = warpgroup_mma_wait(num_outstanding=1, deps=[u_t, ws_t, vt])
            vn = gl.convert_layout(u_t, L_C) - ws_t * gl.expand_dims(inv_s, 1)    # v'^T [_BV, C]
            v_hi, v_lo, inv_v = _split_f16_rows(vn, True)
            # the output's small group first: the state update's wait then covers every group
            a_vo = gl.convert_layout(v_hi, A_C16)
            a_vh = gl.convert_layout(v_hi, A_K16)
            a_vl = gl.convert_layout(v_lo, A_K16)
            ov_t = warpgroup_mma(a_vo, aqk_s.index(s).permute((1, 0)), zero_c, is_async=True)
            kv_t = warpgroup_mma(a_vh, kg_s.index(s), zero_k, is_async=True)
            kv_t = warpgroup_mma(a_vl, kg_s.index(s), kv_t, is_async=True)
            g_c = gl.load(gc + hv64 * s_gc + (slot0 + c).to(gl.int64) * K + rk)
            inv_v_k = gl.convert_layout(inv_v, gl.SliceLayout(1, L_K))
            kv_t, qs_t, ov_t, a_s, a_vo, a_vh, a_vl = warpgroup_mma_wait(
                num_outstanding=0, deps=[kv_t, qs_t, ov_t, a_s, a_vo, a_vh, a_vl, w_s.index(s), qg_s.index(s),
                                         kg_s.index(s), tb_s.index(s), aqk_s.index(s), v_s.index(s)])
            st = st * gl.expand_dims(g_c, 0) + kv_t * gl.expand_dims(inv_v_k, 1)
            o_t = qs_t * gl.expand_dims(inv_s, 1) + ov_t * gl.expand_dims(inv_v, 1)
            o_t = gl.convert_layout(o_t.to(o.dtype.element_ty), O_L)
            tok = (bos + c * C + rc_o).to(gl.int64)
            gl.store(o + (gl.expand_dims(tok, 0) * HV + hv) * V + gl.expand_dims(rv_o, 1), o_t,
                     mask=gl.expand_dims(rc_o < left, 0))
            nxt = c + STAGES
            _load_chunk(w_d, qg_d, kg_d, tb_d, aqk_d, v_d, r_ck + nxt * C, r_cc + nxt * C, bos + nxt * C, vcol,
                        ready.index(s), ring, s, nxt < c_hi)
        for j in gl.static_range(STAGES):
            mbarrier.invalidate(ready.index(j))

        if HAS_HT:
            if ends_here:
                i1 = _state_slot(ht_indices, n, HAS_HT_IDX)
                if i1 >= 0:
                    gl.store(ht + (i1 * HV + hv64) * K * V + _tile_offsets(vb, K, V, L_K, STATE_V_FIRST),
                             st.to(ht.dtype.element_ty))
        if PARTED:
            if last >= slot_hi:
                gl.store(carry + hv64 * s_carry + n64 * K * V + _tile_offsets(vb, K, V, L_K, False), st)


else:  # pragma: no cover - depends on the installed triton
    chunk_state_gluon_kernel = None


def available() -> bool:
    """Whether this triton has Gluon's Hopper layer."""
    return gluon is not None


def same_capacity(w, qg, kg, tb, aqk) -> bool:
    """Whether the scratch buffers that share a rows-per-head argument hold as many slots per head."""
    return w.stride(0) == qg.stride(0) == kg.stride(0) and tb.stride(0) == aqk.stride(0)


def _row_view(t: torch.Tensor, width: int) -> tuple[torch.Tensor, int]:
    """A ``[HV, slots, ...]`` scratch buffer as a 2-D ``[HV * rows, width]`` view over its storage
    (rows per head ``t.stride(0) // width``: the buffer's capacity, not the view's slot count)."""
    rows = t.stride(0) // width
    return torch.as_strided(t, (t.shape[0] * rows, width), (width, 1)), rows


def descriptors(w, qg, kg, tb, aqk, v, C: int, HV: int, V: int) -> dict:
    """TMA descriptors of one call's scratch tiles and of v (``[.., HV, V]`` token-major, contiguous)
    and the rows per head of the scratch views (``rows_ck`` of w, qg and kg, ``rows_cc`` of tb and
    A_qk: one kernel argument each, so the buffers of a pair must hold as many slots per head,
    which :func:`same_capacity` checks)."""
    K = w.shape[-1]
    out = {}
    for name, t, width, dt, rows_key in (("w", w, K, gl.float16, "rows_ck"), ("qg", qg, K, gl.float16, "rows_ck"),
                                         ("kg", kg, K, gl.float16, "rows_ck"), ("tb", tb, C, gl.float32, "rows_cc"),
                                         ("aqk", aqk, C, gl.float16, "rows_cc")):
        view, out[rows_key] = _row_view(t, width)
        out[name] = TensorDescriptor.from_tensor(view, [C, width], gl.NVMMASharedLayout.get_default_for([C, width], dt))
    v2 = v.reshape(-1, HV * V)
    vdt = gl.bfloat16 if v.dtype == torch.bfloat16 else gl.float16
    out["v"] = TensorDescriptor.from_tensor(v2, [C, BV], gl.NVMMASharedLayout.get_default_for([C, BV], vdt))
    return out
