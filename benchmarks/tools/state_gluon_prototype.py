"""Prototype, not part of kimiops: the wide state stage's chunk step in Gluon with the off-chain
wgmma groups asynchronous, timed against ``chunk_state_kernel`` on one plan's scratch.

Question it answers (docs/prefill.md, "Where to go next", thirty-ninth session): the Triton kernel
waits for each of its six wgmma groups per chunk step at once; only ``S^T w^T`` and ``v'^T kg`` are
on the recurrence's chain. Here u (``v^T tb^T``), ``S^T qg^T`` and ``v'^T A_qk^T`` are issued
asynchronously and waited for where their results are used:

    issue u, S^T w^T, S^T qg^T          wait until u and S^T w^T are done (qg's may run on)
    v' = u - S^T w^T, split v'          issue v'^T A_qk^T, v'^T kg (hi, lo)
    wait for all                        S^T = S^T diag(gC) + v'^T kg; o^T = S^T qg^T + v'^T A_qk^T

Two waits per chunk step instead of six.

Scope: one dense sequence (B = 1, T a multiple of C = 32), no initial state, K = V = 128, BV = 64,
one warpgroup per (head, V tile), numerics of ``STATE_CONFIG_WIDE`` (fp16 hi / lo splits with
power-of-two row scales, ``split_ws`` off, ``split_kv`` on, u in tf32). Tiles come by TMA into a
ring of ``STAGES`` chunks with one mbarrier each. Untested on a GPU when written (offline sm_90
compile only); on the H200:

    PYTHONPATH=$PWD python3 benchmarks/tools/state_gluon_prototype.py [--cases B1_T8192,B8_T1024]
        [--stages 2,3] [--modes g,gate]

prints, per case, CUDA-graph medians of ``chunk_state_kernel`` (one launch) and of the prototype on
the same scratch, and o's and the final states' relative difference between them. ``--offline`` (no
GPU needed) compiles it for sm_90 and prints shared memory, registers, spills and the wgmma groups
and waits of the chunk loop.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

import torch
import triton

from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import (fence_async_shared, mbarrier, tma, warpgroup_mma,
                                                               warpgroup_mma_wait)
from triton.experimental.gluon.nvidia.hopper import TensorDescriptor


@gluon.jit
def _split_rows(x):
    """fp32 ``x [R, D]`` -> fp16 ``hi, lo`` and fp32 ``1/s [R]``: ``x s = hi + lo``, s a power of
    two putting each row's max |x| in [2^14, 2^15) (as ``chunk_state._split_f16_rows`` with POW2)."""
    m = gl.max(gl.abs(x), axis=1)
    e = gl.minimum(gl.maximum((m.to(gl.int32, bitcast=True) >> 23) & 0xFF, 15), 254)
    s = ((268 - e) << 23).to(gl.float32, bitcast=True)
    inv_s = ((e - 14) << 23).to(gl.float32, bitcast=True)
    xs = x * gl.expand_dims(s, 1)
    hi = xs.to(gl.float16)
    lo = (xs - hi.to(gl.float32)).to(gl.float16)
    return hi, lo, inv_s


@gluon.jit
def _load_chunk(w_d, qg_d, kg_d, tb_d, aqk_d, v_d, row_ck, row_cc, tok, vcol, bar, w_s, qg_s, kg_s, tb_s, aqk_s,
                v_s, pred):
    nbytes: gl.constexpr = (3 * w_d.block_type.nbytes + tb_d.block_type.nbytes + aqk_d.block_type.nbytes
                            + v_d.block_type.nbytes)
    mbarrier.expect(bar, nbytes, pred=pred)
    tma.async_copy_global_to_shared(w_d, [row_ck, 0], bar, w_s, pred=pred)
    tma.async_copy_global_to_shared(qg_d, [row_ck, 0], bar, qg_s, pred=pred)
    tma.async_copy_global_to_shared(kg_d, [row_ck, 0], bar, kg_s, pred=pred)
    tma.async_copy_global_to_shared(tb_d, [row_cc, 0], bar, tb_s, pred=pred)
    tma.async_copy_global_to_shared(aqk_d, [row_cc, 0], bar, aqk_s, pred=pred)
    tma.async_copy_global_to_shared(v_d, [tok, vcol], bar, v_s, pred=pred)


@gluon.jit
def state_gluon_kernel(w_d, qg_d, kg_d, tb_d, aqk_d, v_d, gc, o, ht, rows_ck, rows_cc, s_gc, NT,
                       HV: gl.constexpr, K: gl.constexpr, V: gl.constexpr, C: gl.constexpr, BV: gl.constexpr,
                       STAGES: gl.constexpr):
    """Grid ``(HV, V // BV, B)``, B dense sequences of ``NT`` chunks each; 4 warps. ``rows_ck`` /
    ``rows_cc``: rows per head of the 2-D views of the ``[C, K]`` and ``[C, C]`` scratch tiles; ``ht``
    fp32 ``[B, HV, K, V]``."""
    hv = gl.program_id(0)
    vb = gl.program_id(1)
    n = gl.program_id(2)
    r_ck = hv * rows_ck + n * NT * C   # the sequence's first chunk slot (n * NT) in rows
    r_cc = hv * rows_cc + n * NT * C
    t0 = n * NT * C
    L_K: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[4, 1], instr_shape=[16, K, 16])
    L_C: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[4, 1], instr_shape=[16, C, 16])
    A_K16: gl.constexpr = gl.DotOperandLayout(operand_index=0, parent=L_K, k_width=2)
    A_C16: gl.constexpr = gl.DotOperandLayout(operand_index=0, parent=L_C, k_width=2)
    L_C8: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[4, 1], instr_shape=[16, C, 8])
    A_C32: gl.constexpr = gl.DotOperandLayout(operand_index=0, parent=L_C8, k_width=1)  # tf32: k = 8

    w_s = gl.allocate_shared_memory(gl.float16, [STAGES, C, K], w_d.layout)
    qg_s = gl.allocate_shared_memory(gl.float16, [STAGES, C, K], qg_d.layout)
    kg_s = gl.allocate_shared_memory(gl.float16, [STAGES, C, K], kg_d.layout)
    tb_s = gl.allocate_shared_memory(gl.float32, [STAGES, C, C], tb_d.layout)
    aqk_s = gl.allocate_shared_memory(gl.float16, [STAGES, C, C], aqk_d.layout)
    v_s = gl.allocate_shared_memory(v_d.dtype, [STAGES, C, BV], v_d.layout)
    ready = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    for j in gl.static_range(STAGES):
        mbarrier.init(ready.index(j), count=1)
    fence_async_shared()
    vcol = hv * V + vb * BV
    for j in gl.static_range(STAGES):
        _load_chunk(w_d, qg_d, kg_d, tb_d, aqk_d, v_d, r_ck + j * C, r_cc + j * C, t0 + j * C, vcol,
                    ready.index(j), w_s.index(j), qg_s.index(j), kg_s.index(j), tb_s.index(j), aqk_s.index(j),
                    v_s.index(j), j < NT)

    rk = gl.arange(0, K, layout=gl.SliceLayout(0, L_K))
    O_L: gl.constexpr = gl.BlockedLayout(size_per_thread=[2, 1], threads_per_warp=[32, 1], warps_per_cta=[1, 4],
                                         order=[0, 1])
    rv_o = vb * BV + gl.arange(0, BV, layout=gl.SliceLayout(1, O_L))
    rc_o = gl.arange(0, C, layout=gl.SliceLayout(0, O_L))
    zero_c = gl.zeros([BV, C], gl.float32, L_C)
    zero_k = gl.zeros([BV, K], gl.float32, L_K)
    st = gl.zeros([BV, K], gl.float32, L_K)                                   # S^T
    for c in range(NT):
        s = c % STAGES
        mbarrier.wait(ready.index(s), (c // STAGES) & 1)
        vt = v_s.index(s).permute((1, 0)).load(A_C32)                         # v^T [BV, C]
        u_t = warpgroup_mma(vt.to(gl.float32), tb_s.index(s).permute((1, 0)), gl.zeros([BV, C], gl.float32, L_C8),
                            is_async=True)
        s_hi, s_lo, inv_s = _split_rows(st)
        a_s = gl.convert_layout(s_hi, A_C16)
        ws_t = warpgroup_mma(a_s, w_s.index(s).permute((1, 0)), zero_c, is_async=True)
        qs_t = warpgroup_mma(a_s, qg_s.index(s).permute((1, 0)), zero_c, is_async=True)
        inv_s = gl.convert_layout(inv_s, gl.SliceLayout(1, L_C))  # same rows per thread in L_K and L_C
        u_t, ws_t = warpgroup_mma_wait(num_outstanding=1, deps=[u_t, ws_t])
        vn = gl.convert_layout(u_t, L_C) - ws_t * gl.expand_dims(inv_s, 1)                            # v'^T [BV, C]
        v_hi, v_lo, inv_v = _split_rows(vn)
        # the output's small group first: the state update's wait then covers every group, and
        # nothing the compiler could sink past a later wait is left on the chain
        ov_t = warpgroup_mma(gl.convert_layout(v_hi, A_C16), aqk_s.index(s).permute((1, 0)), zero_c,
                             is_async=True)
        kv_t = warpgroup_mma(gl.convert_layout(v_hi, A_K16), kg_s.index(s), zero_k, is_async=True)
        kv_t = warpgroup_mma(gl.convert_layout(v_lo, A_K16), kg_s.index(s), kv_t, is_async=True)
        g_c = gl.load(gc + hv * s_gc + (n * NT + c) * K + rk)
        inv_v_k = gl.convert_layout(inv_v, gl.SliceLayout(1, L_K))
        kv_t, qs_t, ov_t = warpgroup_mma_wait(num_outstanding=0, deps=[kv_t, qs_t, ov_t, w_s.index(s), qg_s.index(s),
                                                                       kg_s.index(s), tb_s.index(s), aqk_s.index(s),
                                                                       v_s.index(s)])
        st = st * gl.expand_dims(g_c, 0) + kv_t * gl.expand_dims(inv_v_k, 1)
        o_t = qs_t * gl.expand_dims(inv_s, 1) + ov_t * gl.expand_dims(inv_v, 1)
        # stored from a layout whose lanes run along V (o's contiguous axis); from the accumulator's
        # each thread would store 16 scattered 2-byte values per step
        o_t = gl.convert_layout(o_t.to(o.dtype.element_ty), O_L)
        gl.store(o + (gl.expand_dims(t0 + c * C + rc_o, 0) * HV + hv) * V + gl.expand_dims(rv_o, 1), o_t)
        nxt = c + STAGES
        _load_chunk(w_d, qg_d, kg_d, tb_d, aqk_d, v_d, r_ck + nxt * C, r_cc + nxt * C, t0 + nxt * C,
                    vcol, ready.index(s), w_s.index(s), qg_s.index(s), kg_s.index(s), tb_s.index(s),
                    aqk_s.index(s), v_s.index(s), nxt < NT)
    for j in gl.static_range(STAGES):
        mbarrier.invalidate(ready.index(j))
    rv_k = vb * BV + gl.arange(0, BV, layout=gl.SliceLayout(1, L_K))
    gl.store(ht + (n * HV + hv) * K * V + gl.expand_dims(rk, 0) * V + gl.expand_dims(rv_k, 1), st)


def _rows_view(t, width):
    """``[HV, ...]`` scratch as a 2-D ``[HV * rows, width]`` view (rows per head = stride(0) / width)."""
    rows = t.stride(0) // width
    assert t.stride(0) % width == 0
    return torch.as_strided(t, (t.shape[0] * rows, width), (width, 1)), rows


def descriptors(p, BV):
    """TMA descriptors of one plan's scratch and v (``kimiops.kda.kernels.chunk._plan``)."""
    K, C = p["K"], p["C"]
    out = {}
    for name, width in (("w", K), ("qg", K), ("kg", K), ("tb", C), ("aqk", C)):
        view, rows = _rows_view(p[name], width)
        dt = gl.float32 if view.dtype == torch.float32 else gl.float16
        out[name] = TensorDescriptor.from_tensor(view, [C, width], gl.NVMMASharedLayout.get_default_for([C, width], dt))
        out["rows_" + ("ck" if width == K else "cc")] = rows
    v2 = p["v"].reshape(-1, p["HV"] * p["V"])
    vdt = gl.bfloat16 if v2.dtype == torch.bfloat16 else gl.float16
    out["v"] = TensorDescriptor.from_tensor(v2, [C, BV], gl.NVMMASharedLayout.get_default_for([C, BV], vdt))
    return out


def offline(stages, K=128, V=128, C=32, BV=64, HV=32):
    """sm_90 compile without a GPU: resources and the chunk loop's wgmma groups and waits."""
    from triton._C.libtriton import native_specialize_impl
    from triton.backends.compiler import GPUTarget
    from triton.backends.nvidia.compiler import CUDABackend
    from triton.experimental.gluon._runtime import GluonASTSource

    def desc(shape, block, dt, gdt):
        d = TensorDescriptor.from_tensor(torch.empty(shape, dtype=dt), block, gl.NVMMASharedLayout.get_default_for(block, gdt))
        return native_specialize_impl(CUDABackend, d, False, True, True)[0]

    f16 = (torch.float16, gl.float16)
    sig = dict(w_d=desc((4096, K), [C, K], *f16), qg_d=desc((4096, K), [C, K], *f16), kg_d=desc((4096, K), [C, K], *f16),
               tb_d=desc((4096, C), [C, C], torch.float32, gl.float32), aqk_d=desc((4096, C), [C, C], *f16),
               v_d=desc((4096, HV * V), [C, BV], torch.bfloat16, gl.bfloat16),
               gc="*fp32", o="*bf16", ht="*fp32", rows_ck="i32", rows_cc="i32", s_gc="i32", NT="i32")
    const = dict(HV=HV, K=K, V=V, C=C, BV=BV, STAGES=stages)
    sig.update({k: "constexpr" for k in const})
    k = triton.compile(GluonASTSource(state_gluon_kernel, sig, const), target=GPUTarget("cuda", 90, 32),
                       options=dict(num_warps=4))
    bin_dir = os.path.join(os.path.dirname(triton.__file__), "backends/nvidia/bin")
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "k.ptx"), "w") as f:
            f.write(k.asm["ptx"])
        r = subprocess.run([os.path.join(bin_dir, "ptxas"), "-arch=sm_90a", "-v", f.name, "-o", d + "/k.cubin"],
                           capture_output=True, text=True, check=True)
        sass = subprocess.run([os.path.join(bin_dir, "nvdisasm"), "-c", d + "/k.cubin"], check=True,
                              capture_output=True, text=True).stdout
    stats = " ".join(re.findall(r"Used \d+ registers|\d+ bytes spill stores", r.stderr))
    lines = sass.split("\n")
    labels = {line[:-1]: i for i, line in enumerate(lines) if re.match(r"^\.L_x_\d+:", line)}
    loops = []
    for i, line in enumerate(lines):  # back edges whose body issues wgmma: "a x b" groups, "|" a wait
        m = re.search(r"BRA\s+.*?(\.L_x_\d+)", line)
        if m and labels.get(m.group(1), i) < i and any("HGMMA" in b for b in lines[labels[m.group(1)]:i]):
            seq = ""
            for b in lines[labels[m.group(1)]:i]:
                seq += "+" if "WARPGROUP.ARRIVE" in b else "h" if "HGMMA" in b else "|" if "WARPGROUP.DEPBAR" in b else ""
            loops.append([g if g == "|" else str(len(g)) for g in seq.replace("|", "+|+").split("+") if g])
    print(f"stages {stages}: shared {k.metadata.shared} B; {stats}; wgmma per group and waits (|) of the loops: "
          + "; ".join(" ".join(g) for g in loops))


def compare(bk, chunk_mod, rel_err, B, T, mode, stages_list, BV=64):
    """One case: stage 1 once, then ``chunk_state_kernel`` (one launch, no parts) and the prototype on
    the same scratch: their differences and graph medians."""
    c = bk.make_case(B, T, mode)
    ht_ref = torch.empty(B, bk.HV, bk.K, bk.V, device="cuda")
    o_ref = torch.empty_like(c["v"])
    kw = dict(scale=bk.K ** -0.5, cu_seqlens=None, h0=None, h0_indices=None, ht=ht_ref, ht_indices=None,
              state_v_first=False, use_qk_l2norm=True, use_beta_sigmoid=False, gate=bk.GATE_OF_MODE[mode],
              A_log=c["A_log"], dt_bias=c["dt_bias"], lower_bound=None, out=o_ref, intra_config=None,
              state_config=None)
    p = chunk_mod._plan(c["q"], c["k"], c["v"], c["g"], c["beta"], **kw)
    chunk_mod._launch_intra(p)
    chunk_mod._launch_state(p)
    torch.cuda.synchronize()
    t_ref = bk.bench_graph(lambda: chunk_mod._launch_state(p), 40)
    print(f"B{B} T{T} {mode}: chunk_state_kernel {p['sc']}: {t_ref * 1e3:.1f} us", flush=True)
    d = descriptors(p, BV)
    for stages in stages_list:
        o = torch.empty_like(o_ref)
        ht = torch.empty_like(ht_ref)

        def ours():
            state_gluon_kernel[(p["HV"], p["V"] // BV, B)](
                d["w"], d["qg"], d["kg"], d["tb"], d["aqk"], d["v"], p["gc"], o, ht, d["rows_ck"], d["rows_cc"],
                p["gc"].stride(0), p["NT"], HV=p["HV"], K=p["K"], V=p["V"], C=p["C"], BV=BV, STAGES=stages,
                num_warps=4)

        ours()
        torch.cuda.synchronize()
        t = bk.bench_graph(ours, 40)
        print(f"  gluon prototype, {stages} stages: {t * 1e3:.1f} us ({t_ref / t:.2f}x); o rel diff "
              f"{rel_err(o, o_ref):.3e}, state rel diff {rel_err(ht, ht_ref):.3e}", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", default="B1_T8192,B8_T1024,B1_T32768,B4_T4096")
    ap.add_argument("--stages", default="2,3")
    ap.add_argument("--modes", default="g")
    ap.add_argument("--offline", action="store_true")
    args = ap.parse_args()
    stages = [int(x) for x in args.stages.split(",")]
    if args.offline:
        for st in stages:
            offline(st)
        return
    sys.path.insert(0, "benchmarks")
    import bench_kda_prefill as bk
    from kimiops.kda.kernels import chunk as chunk_mod
    from kimiops.testing import rel_err

    print(f"device {torch.cuda.get_device_name()}, triton {triton.__version__}")
    for case in args.cases.split(","):
        B, T = (int(x[1:]) for x in case.split("_"))
        for mode in args.modes.split(","):
            compare(bk, chunk_mod, rel_err, B, T, mode, stages)


if __name__ == "__main__":
    main()
