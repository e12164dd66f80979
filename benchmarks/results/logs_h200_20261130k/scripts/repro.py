"""Reproduce the b1_parts failure of run 2: the first (non-debug) call of a new specialization (misaligned q)
against the debug full path with aligned q. Tree given as argv[1]. Prints where o differs (token ranges)."""
import os
import sys
sys.path.insert(0, sys.argv[1])
import torch
import kimiops

gen = torch.Generator(device="cuda").manual_seed(11)
H, D, T = 4, 128, 4096
A_log = torch.log(torch.rand(H, device="cuda", generator=gen) * 15 + 1)
dt = torch.randn(H * D, device="cuda", generator=gen) * 0.5


def inputs():
    q, k, v, g = (torch.randn(1, T, H, D, device="cuda", generator=gen, dtype=torch.bfloat16) for _ in range(4))
    beta = torch.randn(1, T, H, device="cuda", generator=gen, dtype=torch.bfloat16)
    return q, k, v, g, beta


def call(x, state, debug):
    if debug:
        os.environ["KIMIOPS_DEBUG"] = "1"
    try:
        return kimiops.chunk_kda(*x, initial_state=state, output_final_state=True, use_qk_l2norm_in_kernel=True,
                                 use_gate_in_kernel=True, use_beta_sigmoid_in_kernel=True, A_log=A_log, dt_bias=dt)
    finally:
        os.environ.pop("KIMIOPS_DEBUG", None)


def compare(tag, a, b):
    (oa, sa), (ob, sb) = a, b
    if torch.equal(oa, ob) and torch.equal(sa, sb):
        print(f"{tag}: equal", flush=True)
        return
    bad = (oa.float() - ob.float()).abs().amax(dim=(0, 2, 3))
    rows = torch.nonzero(bad).flatten()
    print(f"{tag}: DIFFER o max {bad.max().item():.3g}, rows {rows.numel()} first {rows[:1].tolist()} last "
          f"{rows[-1:].tolist()}, state max {(sa - sb).abs().max().item():.3g}", flush=True)


state0 = torch.randn(1, H, D, D, device="cuda", generator=gen) * 0.1
for it in range(3):
    x = inputs()
    compare(f"aligned it{it} fast vs debug", call(x, state0.clone(), False), call(x, state0.clone(), True))
for it in range(3):
    x = inputs()
    buf = torch.empty(x[0].numel() + 8, device="cuda", dtype=torch.bfloat16)
    q_odd = buf[1 + it:1 + it + x[0].numel()].view(x[0].shape)
    q_odd.copy_(x[0])
    xo = (q_odd, *x[1:])
    r_fast = call(xo, state0.clone(), False)
    r_fast2 = call(xo, state0.clone(), False)
    compare(f"misaligned it{it} first fast vs debug aligned", r_fast, call(x, state0.clone(), True))
    compare(f"misaligned it{it} second fast vs debug aligned", r_fast2, call(x, state0.clone(), True))
    compare(f"misaligned it{it} debug misaligned vs debug aligned", call(xo, state0.clone(), True),
            call(x, state0.clone(), True))
