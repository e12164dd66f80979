"""N = 1, 2, 8 packed decode: source variants of our decode kernel and of vLLM 0.33's packed-decode
kernel, loaded side by side in one process (each variant a module built from patched source), to find
what makes vLLM's kernel ~0.3 us faster at N = 1 (run 1: 2.85-3.00 against 3.11-3.29 us).

Ours (batch mode, recurrent_kda_fwd_config with the given BVxNW):
  base; W: gdc_wait before gdc_launch_dependents (vLLM's order); I: in place, the pool index is loaded
  once (i1 = i0); WI: both.
vLLM's (its launcher, BV 32, 4 warps): base; L: gdc_launch_dependents before gdc_wait (our order);
  8x1: BV 8 on one warp.
CUDA-graph medians of 20 chained calls, best of 3 interleaved rounds, same slots / cold (20 slot sets).

    PYTHONPATH=$PWD:$PWD/benchmarks:.exp/vllm_kda python3 variants.py .exp/vllm_kda
"""
import importlib.util
import os
import sys

import torch

from bench_kda_decode import GRAPH_CALLS
from bench_vllm_kda import H, K, V, gate_params, load_vllm
from kimiops.bench.timing import graph_us
from kimiops.kda.kernels import recurrent as rec

vk, source = load_vllm(sys.argv[1])
VFILE = sys.modules[vk.fused_recurrent_kda_packed_decode.__module__].__file__
print("vLLM kernels from", source, VFILE, flush=True)


def load(path, name, patches):
    src = open(path).read()
    for old, new in patches:
        assert old in src, (name, old)
        src = src.replace(old, new)
    tmp = f"/tmp/variant_{name}.py"
    open(tmp, "w").write(src)
    spec = importlib.util.spec_from_file_location(name, tmp)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


OURS_W = ("""        tl.extra.cuda.gdc_launch_dependents()
        tl.extra.cuda.gdc_wait()""", """        tl.extra.cuda.gdc_wait()
        tl.extra.cuda.gdc_launch_dependents()""")
OURS_I = ("""        i1 = n64
        if HAS_HT_IDX:
            i1 = tl.load(ht_idx + i_n).to(tl.int64)""", """        i1 = n64
        if INPLACE:
            i1 = i0
        elif HAS_HT_IDX:
            i1 = tl.load(ht_idx + i_n).to(tl.int64)""")
VL_L = ("""        tl.extra.cuda.gdc_wait()
        tl.extra.cuda.gdc_launch_dependents()

    state_idx = tl.load(state_indices""", """        tl.extra.cuda.gdc_launch_dependents()
        tl.extra.cuda.gdc_wait()

    state_idx = tl.load(state_indices""")
VL_8 = [("""    BV = min(next_power_of_2(V), 32)
    if scale is None:
        scale = K**-0.5

    if out is None:
        out = torch.empty((1, B, H, V)""", """    BV = min(next_power_of_2(V), 8)
    if scale is None:
        scale = K**-0.5

    if out is None:
        out = torch.empty((1, B, H, V)"""),
        ("""        USE_LOWER_BOUND=lower_bound is not None,
        num_warps=4,
        num_stages=2,
        launch_pdl=current_platform.is_arch_support_pdl(),
    )
    return out, initial_state""", """        USE_LOWER_BOUND=lower_bound is not None,
        num_warps=1,
        num_stages=2,
        launch_pdl=current_platform.is_arch_support_pdl(),
    )
    return out, initial_state""")]

ours = {"base": rec, "W": load(rec.__file__, "rec_W", [OURS_W]), "I": load(rec.__file__, "rec_I", [OURS_I]),
        "WI": load(rec.__file__, "rec_WI", [OURS_W, OURS_I])}
vllm = {"base": vk, "L": load(VFILE, "vl_L", [VL_L]), "8x1": load(VFILE, "vl_8", VL_8)}

gen = torch.Generator(device="cuda").manual_seed(0)
bf = torch.bfloat16
A_log, dt_bias = gate_params(gen)
slots = 1 + GRAPH_CALLS * 8
pool = torch.randn(slots, H, V, K, device="cuda", generator=gen) * 0.1
CFG = {1: (8, 1), 2: (8, 4), 8: (8, 1)}
for N in (1, 2, 8):
    perm = 1 + torch.randperm(slots - 1, device="cuda", generator=gen).to(torch.int32)
    sets = [perm[i * N:(i + 1) * N].contiguous() for i in range(GRAPH_CALLS)]
    mixed = torch.randn(N, 3 * H * K, device="cuda", generator=gen).to(bf)
    raw_g = torch.randn(1, N, H, K, device="cuda", generator=gen).to(bf)
    raw_beta = torch.randn(1, N, H, device="cuda", generator=gen).to(bf)
    rs = mixed.stride(0)
    q, k, v = (mixed.as_strided((N, 1, H, K), (rs, rs, K, 1), off * H * K) for off in range(3))
    gv, bv_ = raw_g.view(N, 1, H, K), raw_beta.view(N, 1, H)
    bv, nw = CFG[N]

    def our_call(mod, idx):
        return lambda: mod.recurrent_kda_fwd_config(
            bv, nw, q, k, v, gv, bv_, scale=K ** -0.5, cu_seqlens=None, h0=pool, h0_indices=idx, ht=pool,
            ht_indices=idx, state_v_first=True, use_qk_l2norm=True, use_beta_sigmoid=True, gate="softplus",
            A_log=A_log, dt_bias=dt_bias, lower_bound=None, skip_padded=True)

    def vl_call(mod, idx):
        return lambda: mod.fused_recurrent_kda_packed_decode(mixed, raw_g, raw_beta, A_log, dt_bias, None, pool, idx)

    fns = {}
    for name, mod in ours.items():
        fns[f"ours_{name}"] = ([our_call(mod, sets[0])] * GRAPH_CALLS, [our_call(mod, i) for i in sets])
    for name, mod in vllm.items():
        fns[f"vllm_{name}"] = ([vl_call(mod, sets[0])] * GRAPH_CALLS, [vl_call(mod, i) for i in sets])
    # every variant gives the bits of its base (same pool, same slots)
    saved = pool.clone()
    ref = {}
    for name, (same, _) in fns.items():
        pool.copy_(saved)
        o = same[0]()
        o = o[0] if isinstance(o, tuple) else o
        ref[name] = (o.float().reshape(-1).clone(), pool[sets[0].long()].clone())
    pool.copy_(saved)
    eq = {n: bool(torch.equal(ref[n][0], ref["ours_base" if n.startswith("ours") else "vllm_base"][0])
                  and torch.equal(ref[n][1], ref["ours_base" if n.startswith("ours") else "vllm_base"][1])) for n in ref}
    best = {}
    for _ in range(3):
        for name, (same, cold) in fns.items():
            for tag, calls in (("", same), ("_cold", cold)):
                us = graph_us(calls)
                best[name + tag] = min(best.get(name + tag, us), us)
    print(f"N={N} (ours {bv}x{nw}): " + "  ".join(f"{n} {best[n]:.2f}/{best[n + '_cold']:.2f}{'' if eq[n] else ' BITS DIFFER'}"
                                                for n in fns), flush=True)
