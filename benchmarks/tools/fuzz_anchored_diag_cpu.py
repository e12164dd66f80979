"""The lower-bound gate's anchored diagonal blocks (``chunk_intra._diag_anchored``) against the
four-level hierarchy and the fp64 recurrence, over random calls in Triton's interpreter (CPU): head
dims, GVA, varlen layouts, lower bounds in [-5, 0), logit scales from mild to saturated (every step
at the bound), raw q / k norms up to ~1e4, fp16 / fp32 inputs. Prints each call's errors and the
largest; exits 1 on a non-finite output or an error above 3e-3 (the issue's limit).

    PYTHONPATH=$PWD python3 benchmarks/tools/fuzz_anchored_diag_cpu.py [--calls 40] [--seed 0]
"""
import argparse
import os
import sys

os.environ["TRITON_INTERPRET"] = "1"

import torch  # noqa: E402

from kimiops.kda.gate import beta_from_logits, kda_gate, l2norm  # noqa: E402
from kimiops.kda.kernels.chunk import chunk_kda_fwd  # noqa: E402
from kimiops.kda.reference import naive_recurrent_kda  # noqa: E402
from kimiops.testing import rel_err  # noqa: E402


def one_call(gen):
    pick = lambda xs: xs[int(torch.randint(len(xs), (1,), generator=gen))]  # noqa: E731
    K, V = pick([16, 32, 64, 128]), pick([16, 32, 64])
    H = pick([1, 2])
    HV = H * pick([1, 2])
    dtype = pick([torch.float16, torch.float32])
    lens = [int(x) for x in torch.randint(0, 90, (pick([1, 2, 3]),), generator=gen)]
    lens[0] = max(lens[0], 1)
    T = sum(lens)
    cu = torch.tensor([0] + list(torch.tensor(lens).cumsum(0)), dtype=torch.int32) if len(lens) > 1 else None
    lb = -float(torch.empty(1).uniform_(0.05, 5.0, generator=gen)) if pick([0, 1]) else -5.0
    qk_scale = pick([1.0, 30.0, 1e4])
    logit_scale = pick([0.5, 3.0, 100.0])  # 100: nearly every step at 0 or at the bound
    rnd = lambda *s: torch.randn(*s, generator=gen, dtype=torch.float64)  # noqa: E731
    q, k = rnd(1, T, H, K) * qk_scale, rnd(1, T, H, K) * qk_scale
    v, beta = rnd(1, T, HV, V), rnd(1, T, HV)
    g_raw = rnd(1, T, HV, K) * logit_scale
    A_log = torch.log(torch.rand(HV, generator=gen, dtype=torch.float64) * 8 + 1)
    dt_bias = rnd(HV * K)
    ins = [x.to(dtype) for x in (q, k, v, g_raw, beta)]
    g = kda_gate(ins[3].double(), A_log, dt_bias, lb, output_dtype=torch.float64)
    ro, rs = naive_recurrent_kda(l2norm(ins[0].double()), l2norm(ins[1].double()), ins[2].double(), g,
                                 beta_from_logits(ins[4].double(), False), scale=K ** -0.5,
                                 output_final_state=True, cu_seqlens=cu)
    res = {}
    for anchor in (True, False):
        ht = torch.full((len(lens), HV, K, V), float("nan"))
        o = chunk_kda_fwd(*ins, scale=K ** -0.5, cu_seqlens=cu, h0=None, h0_indices=None, ht=ht, ht_indices=None,
                          state_v_first=False, use_qk_l2norm=True, use_beta_sigmoid=True, gate="lower_bound",
                          A_log=A_log.float(), dt_bias=dt_bias.float(), lower_bound=lb, out=None,
                          intra_config={"diag_anchor": anchor})
        fin = bool(torch.isfinite(o.float()).all() and torch.isfinite(ht).all())
        res[anchor] = (fin, rel_err(o, ro), rel_err(ht, rs))
    desc = f"K={K} V={V} H={H} HV={HV} {str(dtype)[6:]} lens={lens} lb={lb:.2f} |qk|x{qk_scale:g} logits x{logit_scale:g}"
    return desc, res


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--calls", type=int, default=40)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    gen = torch.Generator().manual_seed(args.seed)
    worst, bad = 0.0, 0
    for i in range(args.calls):
        desc, res = one_call(gen)
        (fa, oa, sa), (fh, oh, sh) = res[True], res[False]
        worst = max(worst, oa, sa)
        ok = fa and fh and max(oa, sa, oh, sh) <= 3e-3
        bad += not ok
        print(f"{i:3d} {'ok ' if ok else 'BAD'} {desc}: anchored o {oa:.2e} state {sa:.2e} | hierarchy o {oh:.2e} "
              f"state {sh:.2e}", flush=True)
    print(f"{args.calls} calls, {bad} bad, largest anchored error {worst:.2e}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
