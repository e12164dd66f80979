"""The state stage in Triton (``chunk_state_kernel``) and in Gluon (``chunk_state_gluon.py``, its
off-chain products asynchronous) side by side on the H200: per case, stage 1 once, then both state
launches (one launch each, no parts) on the same scratch: CUDA-graph medians, and o's and the final
states' relative differences between them (the same products summed in another order: ~1e-6).

    PYTHONPATH=$PWD python3 benchmarks/tools/state_gluon_ab.py [--cases B1_T8192,B8_T1024] [--stages 2,3]
        [--modes g,gate]
"""
import argparse
import os
import sys

import torch
import triton

sys.path.insert(0, os.path.join(os.getcwd(), "benchmarks"))
import bench_kda_prefill as bk  # noqa: E402
from kimiops.kda.kernels import chunk as chunk_mod  # noqa: E402
from kimiops.testing import rel_err  # noqa: E402


def compare(B, T, mode, stages_list):
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
    print(f"B{B} T{T} {mode}: chunk_state_kernel {t_ref * 1e3:.1f} us", flush=True)
    for stages in stages_list:
        q = dict(p, sc=dict(p["sc"], gluon=True, gluon_stages=stages), o=torch.empty_like(o_ref),
                 ht=torch.empty_like(ht_ref))
        assert chunk_mod.gluon_applies(q)
        chunk_mod._launch_state(q)
        torch.cuda.synchronize()
        t = bk.bench_graph(lambda: chunk_mod._launch_state(q), 40)
        print(f"  gluon, {stages} stages: {t * 1e3:.1f} us ({t_ref / t:.2f}x); "
              f"o rel diff {rel_err(q['o'], o_ref):.3e}, state rel diff {rel_err(q['ht'], ht_ref):.3e}", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", default="B1_T8192,B8_T1024,B1_T32768,B4_T4096")
    ap.add_argument("--stages", default="2,3")
    ap.add_argument("--modes", default="g")
    args = ap.parse_args()
    print(f"device {torch.cuda.get_device_name()}, triton {triton.__version__}")
    for case in args.cases.split(","):
        B, T = (int(x[1:]) for x in case.split("_"))
        for mode in args.modes.split(","):
            compare(B, T, mode, [int(x) for x in args.stages.split(",")])


if __name__ == "__main__":
    main()
