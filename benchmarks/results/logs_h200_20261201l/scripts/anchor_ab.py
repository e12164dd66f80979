"""The lower-bound gate's anchored diagonal blocks (``INTRA_CONFIG["diag_anchor"]``) against the
four-level hierarchy, in one process: CUDA-graph medians of stage 1 alone and of the whole call
(H = HV = 32, K = V = 128, bf16, lower-bound gate at -5 in the kernel, q/k L2 norm), on and off
alternating over two rounds; FLA 0.6's chunk_kda with safe_gate (its bounded-gate path) beside them;
after the accuracy of both against the fp64 recurrence at the issue's shape (B1 T4096 H4).
Arguments: case names (default: all).

    PYTHONPATH=$PWD:$PWD/benchmarks python3 benchmarks/results/logs_h200_20261201l/scripts/anchor_ab.py
"""
import sys

import torch

import bench_kda_prefill as bk
from kimiops.kda.gate import kda_gate, l2norm
from kimiops.kda.reference import naive_recurrent_kda
from kimiops.testing import rel_err

CASES = [("B1_T8192", 1, 8192, None), ("B8_T1024", 8, 1024, None), ("B4_T4096", 4, 4096, None),
         ("varlen7_16384", 1, sum(bk.VARLEN_LENS), bk.VARLEN_LENS)]
REP = 40


def main():
    names = sys.argv[1:]
    print(f"device {torch.cuda.get_device_name()}, torch {torch.__version__}")
    # accuracy at the shape, both variants, against fp64
    c = bk.make_case(1, 4096, "lb", h=4, hv=4)
    g = kda_gate(c["g"].double().cpu(), c["A_log"].double().cpu(), c["dt_bias"].double().cpu(), bk.LOWER_BOUND,
                 output_dtype=torch.float64)
    ro, rs = naive_recurrent_kda(l2norm(c["q"].double().cpu()), l2norm(c["k"].double().cpu()), c["v"].double().cpu(),
                                 g, c["beta"].double().cpu(), scale=bk.K ** -0.5, output_final_state=True)
    for anchor in (True, False):
        ht = torch.full((1, 4, bk.K, bk.V), float("nan"), device="cuda")
        out = torch.empty_like(c["v"])
        intra = dict(bk.INTRA_CONFIG, diag_anchor=anchor)
        bk.chunk_mod.chunk_kda_fwd(c["q"], c["k"], c["v"], c["g"], c["beta"], scale=bk.K ** -0.5, cu_seqlens=None,
                                   h0=None, h0_indices=None, ht=ht, ht_indices=None, state_v_first=False,
                                   use_qk_l2norm=True, use_beta_sigmoid=False, gate="lower_bound", A_log=c["A_log"],
                                   dt_bias=c["dt_bias"], lower_bound=bk.LOWER_BOUND, out=out, intra_config=intra)
        torch.cuda.synchronize()
        fin = bool(torch.isfinite(out.float()).all() and torch.isfinite(ht).all())
        print(f"accuracy B1 T4096 H4 lower-bound gate, diag_anchor={anchor}: rel o {rel_err(out.cpu(), ro):.3e}, "
              f"rel state {rel_err(ht.cpu(), rs):.3e}, finite {fin}")

    for name, B, T, lens in CASES:
        if names and name not in names:
            continue
        c = bk.make_case(B, T, "lb", lens=lens)
        N = len(lens) if lens else B
        ht = torch.empty(N, bk.HV, bk.K, bk.V, device="cuda")
        out = torch.empty_like(c["v"])
        res = {True: [], False: []}
        for rnd in range(2):
            for anchor in (True, False):
                intra = dict(bk.INTRA_CONFIG, diag_anchor=anchor)
                full = bk.ours_fn(c, ht, out, intra)
                full()
                s1 = bk.bench_graph(bk.ours_fn(c, ht, out, intra, stage="intra"), REP)
                whole = bk.bench_graph(full, REP)
                res[anchor].append((s1, whole))
                print(f"  {name} round {rnd} diag_anchor={anchor}: stage 1 {s1 * 1e3:.1f} us, call {whole * 1e3:.1f} us")
        fla = bk.fla_fn(c)
        g_fla = bk.bench_graph(fla, REP) if fla is not None else None
        e_fla = bk.bench_eager(fla, REP) if fla is not None else None
        on = [sum(x[i] for x in res[True]) / 2 for i in (0, 1)]
        off = [sum(x[i] for x in res[False]) / 2 for i in (0, 1)]
        fla_ms = g_fla if g_fla is not None else e_fla
        print(f"{name}: stage 1 {on[0] * 1e3:.1f} vs {off[0] * 1e3:.1f} us ({off[0] / on[0]:.3f}x); call "
              f"{on[1] * 1e3:.1f} vs {off[1] * 1e3:.1f} us ({off[1] / on[1]:.3f}x); FLA safe_gate graph "
              f"{g_fla if g_fla is None else round(g_fla * 1e3, 1)} eager {e_fla if e_fla is None else round(e_fla * 1e3, 1)} us;"
              f" speedup over FLA {fla_ms / on[1]:.2f}x (anchored) / {fla_ms / off[1]:.2f}x (hierarchy)")
        del c, ht, out


if __name__ == "__main__":
    main()
