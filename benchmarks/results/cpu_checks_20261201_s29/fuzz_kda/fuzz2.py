"""Randomized differential fuzzer: kimiops Triton KDA kernels (interpreter) vs fp64 oracle and torch path.

usage: python fuzz.py {prefill|decode} SEED_START COUNT [--verbose]
       python fuzz.py {prefill|decode} --one SEED   (re-run / print one case)
"""
import os
os.environ["TRITON_INTERPRET"] = "1"
import sys, json, math, random, time, traceback

import torch
torch.set_num_threads(1)
import kimiops
from kimiops.kda.reference import naive_recurrent_kda
from kimiops.kda.gate import kda_gate, l2norm
import kimiops.kda.kernels.chunk as chunk_mod
import kimiops.kda.kernels.recurrent as rec_mod
from kimiops.kda.kernels.chunk_state import STATE_CONFIG_NARROW, STATE_CONFIG_WIDE, STATE_CANDIDATES
from kimiops.kda.kernels.recurrent import TileConfig

PIPE_ORIG = dict(chunk_mod.PIPELINE_CONFIG)
INTRA_ORIG = dict(chunk_mod.INTRA_CONFIG)
SCF_ORIG = chunk_mod.state_config_for
REC_ORIG = dict(rec_mod._CONFIGS)

EDGE_LENS = [0, 1, 31, 32, 33, 63, 64, 65]

STATE_VARIANTS = [None, STATE_CONFIG_NARROW, dict(STATE_CONFIG_NARROW, BV=16, num_warps=1, num_stages=2),
                  {"BV": 32, "hi_first": False}, {"BV": 16, "num_warps": 2, "pow2_scale": True},
                  {"BV": 64, "num_warps": 4, "pow2_scale": False}, {"split_ws": True}, {"split_kv": False},
                  {"longest_first": False}, {"grid_3d": False}, {"v_tiles_adjacent": True},
                  {"BV": 32, "v_tiles_adjacent": True, "grid_3d": False}] + list(STATE_CANDIDATES[:4])
INTRA_VARIANTS = [{}, {"BK": 32}, {"BK2": 32}, {"BK2": 64}, {"loop_stages": 2}, {"stash_g": False},
                  {"BK": 32, "num_warps": 4}, {"BK": 64, "BK2": 64}]


def choose_cfg(op, seed):
    r = random.Random(seed * 7919 + (0 if op == "prefill" else 1))
    c = {"op": op, "seed": seed}
    c["H"] = r.choice([1, 2])
    c["G"] = r.choice([1, 2, 4]) if c["H"] == 1 else r.choice([1, 2])
    c["K"] = r.choice([16, 32, 64])
    c["V"] = r.choice([16, 32, 64])
    c["dtype"] = "fp16" if r.random() < 0.2 else "fp32"
    c["gb_fp32"] = c["dtype"] == "fp16" and r.random() < 0.5  # g and beta in fp32 beside fp16 q/k/v
    varlen = r.random() < 0.6
    if op == "prefill":
        if varlen:
            lens, budget = [], 100
            for _ in range(r.randint(1, 5)):
                L = r.choice(EDGE_LENS) if r.random() < 0.7 else r.randint(0, 100)
                if L > budget:
                    L = r.choice([x for x in EDGE_LENS if x <= budget])
                lens.append(L)
                budget -= L
            c["lens"] = lens
        else:
            c["B"] = r.choice([1, 2, 3])
            c["T"] = r.choice(EDGE_LENS[1:] + [r.randint(1, 100)]) if c["B"] == 1 else r.choice([1, 31, 32, 33, 17, 40, r.randint(1, 33)])
    else:
        if varlen:
            c["lens"] = [r.choice([0, 1, 1, 2, 3, 4]) for _ in range(r.randint(1, 6))]
        else:
            c["B"] = r.choice([1, 2, 3])
            c["T"] = r.randint(1, 4)
    c["state_v_first"] = r.random() < 0.5
    c["state"] = r.choice(["none", "dense", "pool", "pool"])
    c["idx64"] = r.random() < 0.3
    c["cu64"] = r.random() < 0.3
    c["l2"] = r.random() < 0.6
    c["sig"] = r.random() < 0.6
    c["neg_eig"] = c["sig"] and r.random() < 0.15
    c["gate"] = r.choice(["none", "none", "softplus", "lower_bound"])
    if c["gate"] == "none":
        c["gmag"] = r.choice(["mild", "huge", "slow", "mixed", "zero_mix"])
    elif c["gate"] == "softplus":
        c["gmag"] = r.choice(["mild", "big", "huge"])
        c["dt_bias"] = r.random() < 0.85
        c["dt2d"] = r.random() < 0.2
    else:
        c["lb"] = r.choice([-5.0, r.uniform(-5, -1e-3), -1e-3, -0.5])
        c["has_A"] = r.random() < 0.6
        c["dt_bias"] = r.random() < 0.8
        c["dt2d"] = r.random() < 0.2
        c["gmag"] = r.choice(["mild", "big"])
    c["scale"] = None if r.random() < 0.5 else round(r.uniform(0.05, 1.5), 3)
    c["ofs"] = r.random() < 0.7
    c["strided"] = r.random() < 0.3
    c["repeat"] = r.random() < 0.1
    if op == "prefill" and "lens" in c and r.random() < 0.25:  # many short sequences
        c["lens"] = [r.choice([0, 1, 2, 5, 16, 17, 31, 32, 33]) for _ in range(r.randint(5, 10))]
        while sum(c["lens"]) > 100:
            c["lens"].pop()
    if op == "decode" and r.random() < 0.15:
        c["K"] = r.choice([24, 40, 48, 16]); c["V"] = r.choice([24, 40, 48, 8])
    c["track"] = op == "prefill" and r.random() < 0.25
    c["krep"] = r.random() < 0.2
    c["spec"] = op == "decode" and c["state"] == "pool" and r.random() < 0.35
    c["num_acc"] = c["spec"] and r.random() < 0.6
    c["pad0"] = op == "decode" and c["state"] == "pool" and r.random() < 0.2
    c["h0_scale"] = r.choice([0.5, 1.0, 5.0])
    if op == "prefill":
        p = r.random()
        if p < 0.35:
            c["pipe"] = ["default"]
        elif p < 0.65:
            c["pipe"] = ["parts", r.choice([2, 3, 4, 5, 7])]
        else:
            c["pipe"] = ["segments", r.choice([2, 3, 4, 5, 7, 16])]
        c["state_cfg"] = r.randrange(len(STATE_VARIANTS)) if r.random() < 0.4 else 0
        c["intra_cfg"] = r.randrange(len(INTRA_VARIANTS)) if r.random() < 0.3 else 0
    else:
        if r.random() < 0.3:
            c["tile"] = None
        else:
            c["tile"] = [r.choice([8, 16, 32, 64]), r.choice([1, 2, 4, 8]), r.random() < 0.3, r.random() < 0.4,
                         r.random() < 0.3]
    return c


def make_inputs(c):
    gen = torch.Generator().manual_seed(c["seed"] * 1000003 + (0 if c["op"] == "prefill" else 7))
    rn = lambda *s: torch.randn(*s, generator=gen, dtype=torch.float64)  # noqa: E731
    ru = lambda *s: torch.rand(*s, generator=gen, dtype=torch.float64)  # noqa: E731
    H, HV, K, V = c["H"], c["H"] * c["G"], c["K"], c["V"]
    if "lens" in c:
        B, T, N = 1, sum(c["lens"]), len(c["lens"])
        cu = torch.tensor([0] + list(torch.tensor(c["lens"]).cumsum(0).tolist()),
                          dtype=torch.int64 if c["cu64"] else torch.int32)
    else:
        B, T, N, cu = c["B"], c["T"], c["B"], None
    dt = torch.float16 if c["dtype"] == "fp16" else torch.float32
    gbdt = torch.float32 if c["gb_fp32"] else dt
    q, k = rn(B, T, H, K), rn(B, T, H, K)
    if not c["l2"]:
        q, k = l2norm(q), l2norm(k)
    else:
        q = q * ru(B, T, H, 1) * 3
        k = k * ru(B, T, H, 1) * 3
    if c.get("krep"):  # runs of identical keys (repeated tokens)
        for bb_ in range(B):
            t0 = 0
            while t0 < T:
                L = int(torch.randint(1, 40, (1,), generator=gen))
                k[bb_, t0:t0 + L] = k[bb_, t0:t0 + 1]
                t0 += L
    v = rn(B, T, HV, V)
    if c["sig"]:
        b = rn(B, T, HV) * 2
    else:
        b = ru(B, T, HV)
        b[ru(B, T, HV) < 0.05] = 1.0
        b[ru(B, T, HV) < 0.05] = 0.0
    A_log = dt_bias = None
    lb = None
    if c["gate"] == "none":
        m = c["gmag"]
        if m == "mild":
            g = -(ru(B, T, HV, K) * 0.99 + 0.01)
        elif m == "huge":
            g = -(ru(B, T, HV, K) * 0.99 + 0.01)
            sel = ru(B, T, HV, K) < 0.3
            g[sel] = -ru(B, T, HV, K)[sel] * 3000
        elif m == "slow":
            g = -(ru(B, T, HV, K) * 1.5e-4 + 0.5e-4)
        elif m == "mixed":  # per channel: mild / huge / slow
            cls = torch.randint(0, 3, (1, 1, HV, K), generator=gen).expand(B, T, HV, K)
            g = torch.where(cls == 0, -(ru(B, T, HV, K) + 0.01),
                            torch.where(cls == 1, -ru(B, T, HV, K) * 3000, -ru(B, T, HV, K) * 1e-4))
        else:
            g = -ru(B, T, HV, K) * 0.5
            g[ru(B, T, HV, K) < 0.5] = 0.0
    elif c["gate"] == "softplus":
        if c["gmag"] == "mild":
            A_log = torch.log(ru(HV) * 4 + 0.5)
            g = rn(B, T, HV, K)
        elif c["gmag"] == "big":
            A_log = torch.log(ru(HV) * 199 + 1)
            g = rn(B, T, HV, K) * 5
        else:
            A_log = torch.log(torch.linspace(1.0, 200.0, HV, dtype=torch.float64))
            g = rn(B, T, HV, K) * 6 + 8
        if c["dt_bias"]:
            dt_bias = rn(HV * K) * (4.0 if c["gmag"] == "huge" else 0.5)
    else:
        lb = c["lb"]
        if c["has_A"]:
            A_log = rn(HV) * (2.0 if c["gmag"] == "big" else 1.0)
        g = rn(B, T, HV, K) * (3.0 if c["gmag"] == "big" else 1.0)
        if c["dt_bias"]:
            dt_bias = rn(HV * K)
    # inputs as the op sees them
    qi, ki, vi = q.to(dt), k.to(dt), v.to(dt)
    gi = g.to(torch.float32 if (c["gate"] == "none" and dt == torch.float16 and c["gmag"] in ("huge", "mixed")) else gbdt)
    bi = b.to(gbdt)
    A_i = None if A_log is None else A_log.float()
    dtb_i = None if dt_bias is None else dt_bias.float()
    if dtb_i is not None and c.get("dt2d"):
        dtb_i = dtb_i.reshape(HV, K)
    # states
    sshape = (HV, V, K) if c["state_v_first"] else (HV, K, V)
    init64 = torch.zeros(N, *sshape, dtype=torch.float64)
    state = c["state"]
    pad = 0 if c.get("pad0") else -1
    if c["op"] == "decode" and "lens" in c:
        lens = c["lens"]
    elif "lens" in c:
        lens = c["lens"]
    else:
        lens = [T] * N
    rr = random.Random(c["seed"] + 99)
    h0 = idx = num_acc = None
    padded = [False] * N
    if state == "dense":
        h0 = (rn(N, *sshape) * c["h0_scale"]).float()
        init64 = h0.double()
    elif state == "pool":
        if c["spec"]:
            tmax = max([1] + lens) + rr.randint(0, 1)
            S = N * tmax + rr.randint(1, 4) + (1 if pad == 0 else 0)
            perm = [p + (1 if pad == 0 else 0) for p in torch.randperm(S - (1 if pad == 0 else 0), generator=gen).tolist()]
            grid = []
            for n in range(N):
                row = []
                for t in range(tmax):
                    row.append(-1 if rr.random() < 0.2 else perm.pop())
                grid.append(row)
            if pad == 0:
                for row in grid:
                    for t in range(tmax):
                        if rr.random() < 0.1:
                            row[t] = 0
            acc = [rr.randint(1, tmax) for _ in range(N)]
            starts = [grid[n][acc[n] - 1] if c["num_acc"] else grid[n][0] for n in range(N)]
            idx = torch.tensor(grid, dtype=torch.int64 if c["idx64"] else torch.int32)
            if c["num_acc"]:
                num_acc = torch.tensor(acc, dtype=torch.int32)
        else:
            S = N + rr.randint(1, 4)
            perm = torch.randperm(S, generator=gen)[:N].tolist()
            starts = [(-1 if rr.random() < 0.25 else s) for s in perm]
            if pad == 0:
                starts = [(0 if rr.random() < 0.15 else s) for s in starts]
            idx = torch.tensor(starts, dtype=torch.int64 if c["idx64"] else torch.int32)
        pool = torch.full((S, *sshape), float("nan"), dtype=torch.float32)
        for sl in range(S):
            if sl > pad and rr.random() < 0.5:
                pool[sl] = (rn(*sshape) * c["h0_scale"]).float()  # non-poisoned slots nobody reads
        for n, sl in enumerate(starts):
            if sl > pad:
                pool[sl] = (rn(*sshape) * c["h0_scale"]).float()
                init64[n] = pool[sl].double()
            elif c["op"] == "decode":
                padded[n] = True
        h0 = pool
    # oracle inputs (fp64, after preprocessing the exact values the op receives)
    q64, k64 = qi.double(), ki.double()
    if c["l2"]:
        q64, k64 = l2norm(q64), l2norm(k64)
    b64 = bi.double()
    if c["sig"]:
        b64 = torch.sigmoid(b64) * (2 if c["neg_eig"] else 1)
    if c["gate"] == "none":
        g64 = gi.double()
    else:
        g64 = kda_gate(gi.double(), None if A_i is None else A_i.double(),
                       None if dtb_i is None else dtb_i.double().reshape(-1), lb, output_dtype=torch.float64)
    o_ref, s_ref, after = naive_recurrent_kda(q64, k64, vi.double(), g64, b64, scale=c["scale"], initial_state=init64,
                                              output_final_state=True, cu_seqlens=cu,
                                              state_v_first=c["state_v_first"], token_states=True)
    bounds = [0] + list(torch.tensor(lens).cumsum(0).tolist()) if cu is not None else None
    rows = [(n, 0, bounds[n], bounds[n + 1]) for n in range(N)] if cu is not None else [(n, n, 0, T) for n in range(N)]
    # expected pool (fp64) and the slots expected to be written
    exp_pool, written = None, set()
    if state == "pool":
        exp_pool = h0.double().clone()
        for n, b_, s0, e0 in rows:
            if c["op"] == "decode" and padded[n]:
                continue
            if c.get("spec"):
                for t in range(e0 - s0):
                    sl = int(idx[n, t])
                    if sl > pad:
                        exp_pool[sl] = after[b_, s0 + t]
                        written.add(sl)
            else:
                sl = int(idx[n])
                if sl > pad:
                    exp_pool[sl] = s_ref[n]
                    written.add(sl)
    # snapshots (prefill)
    track = track_idx = exp_track = None
    if c.get("track"):
        tl_ = [(-1 if rr.random() < 0.3 else rr.randint(0, L // 64)) for L in lens]
        track_idx = torch.tensor(tl_, dtype=torch.int32)
        track = torch.full((N, *sshape), float("nan"), dtype=torch.float32)
        exp_track = torch.full((N, *sshape), float("nan"), dtype=torch.float64)
        for n, b_, s0, e0 in rows:
            j = tl_[n]
            if j == 0:
                exp_track[n] = init64[n]
            elif j > 0:
                exp_track[n] = after[b_, s0 + 64 * j - 1]
    if c.get("strided"):
        def view_of(x, extra_heads):  # x [B, T, Hx, D] -> a strided view with the same values
            Bx, Tx, Hx, D = x.shape
            base = torch.full((Bx, Tx, Hx + extra_heads, D + 8), float("nan"), dtype=x.dtype)
            base[:, :, extra_heads:, :D] = x
            return base[:, :, extra_heads:, :D]
        qi, ki, vi, gi = view_of(qi, 1), view_of(ki, 2), view_of(vi, 1), view_of(gi, 1)
        bb = torch.full((bi.shape[0], bi.shape[2], bi.shape[1], 2), float("nan"), dtype=bi.dtype)
        bb[..., 0] = bi.transpose(1, 2)
        bi = bb[..., 0].transpose(1, 2)
    return dict(q=qi, k=ki, v=vi, g=gi, beta=bi, A_log=A_i, dt_bias=dtb_i, lb=lb, cu=cu, h0=h0, idx=idx,
                num_acc=num_acc, padded=padded, rows=rows, exp_pool=exp_pool, written=written, track=track,
                track_idx=track_idx, exp_track=exp_track, pad=pad,
                N=N, B=B, T=T, o_ref=o_ref, s_ref=s_ref, dt=dt)


def set_internals(c):
    chunk_mod.PIPELINE_CONFIG.clear(); chunk_mod.PIPELINE_CONFIG.update(PIPE_ORIG)
    chunk_mod.INTRA_CONFIG.clear(); chunk_mod.INTRA_CONFIG.update(INTRA_ORIG)
    chunk_mod.state_config_for = SCF_ORIG
    rec_mod._CONFIGS.clear(); rec_mod._CONFIGS.update(REC_ORIG)
    if c["op"] == "prefill":
        pipe = c["pipe"]
        if pipe[0] == "parts":
            n = pipe[1]
            chunk_mod.PIPELINE_CONFIG.update({"min_parts": n, "max_parts": n, "min_part_slots": 1,
                                              "max_seqs": 1 << 30, "below_pairs": 1 << 30, "segments": 1})
        elif pipe[0] == "segments":
            chunk_mod.PIPELINE_CONFIG.update({"segments": pipe[1]})
        sv = STATE_VARIANTS[c["state_cfg"]]
        if sv is not None:
            chunk_mod.state_config_for = lambda K, _sv=sv: dict(SCF_ORIG(K), **_sv)
        chunk_mod.INTRA_CONFIG.update(INTRA_VARIANTS[c["intra_cfg"]])
    elif c["op"] == "decode":
        if c["tile"] is not None:
            cfg = TileConfig(*c["tile"])
            rec_mod._CONFIGS[True] = ((None, cfg),)
            rec_mod._CONFIGS[False] = ((None, cfg),)


def describe_plan(c, inp):
    """parts / segments the launcher actually takes for this call."""
    if c["op"] != "prefill":
        return None
    q = inp["q"]
    B, T = q.shape[:2]
    HV = inp["v"].shape[2]
    N = inp["N"]
    seq_chunks = -(-T // 32)
    seg_len, seg_max = chunk_mod.segment_layout(B * seq_chunks, seq_chunks, N, HV, c["K"], chunk_mod.PIPELINE_CONFIG)
    NC = T // 32 + N if inp["cu"] is not None else B * seq_chunks
    parts = chunk_mod.pipeline_parts(NC, N * HV, chunk_mod.PIPELINE_CONFIG, seqs=N) if seg_max == 1 else [(0, NC)]
    return {"seg_max": seg_max, "seg_len": seg_len, "parts": len(parts)}


def call(c, inp, backend, pool, track=None):
    f = kimiops.chunk_kda if c["op"] == "prefill" else kimiops.fused_recurrent_kda
    kw = dict(scale=c["scale"], output_final_state=c["ofs"], use_qk_l2norm_in_kernel=c["l2"],
              use_gate_in_kernel=c["gate"] != "none", use_beta_sigmoid_in_kernel=c["sig"],
              A_log=inp["A_log"] if c["gate"] != "none" else None,
              dt_bias=inp["dt_bias"] if c["gate"] != "none" else None,
              lower_bound=inp["lb"], state_v_first=c["state_v_first"], cu_seqlens=inp["cu"], backend=backend)
    if c["neg_eig"]:
        kw["allow_neg_eigval"] = True
    if c["state"] == "pool":
        kw["initial_state"] = pool
        kw["initial_state_indices" if c["op"] == "prefill" else "ssm_state_indices"] = inp["idx"]
        if inp["num_acc"] is not None:
            kw["num_accepted_tokens"] = inp["num_acc"]
        if inp["pad"] == 0:
            kw["pad_slot_id"] = 0
    elif c["state"] == "dense":
        kw["initial_state"] = inp["h0"].clone()
    if track is not None:
        kw["track_state"] = track
        kw["track_chunk_idx"] = inp["track_idx"]
    return f(inp["q"], inp["k"], inp["v"], inp["g"], inp["beta"], **kw)


def seq_rows(inp):
    """(n, b, start, end) per sequence."""
    if inp["cu"] is None:
        return [(n, n, 0, inp["T"]) for n in range(inp["B"])]
    cu = inp["cu"].tolist()
    return [(n, 0, cu[n], cu[n + 1]) for n in range(inp["N"])]


def rel(a, b):
    a, b = a.double(), b.double()
    if not torch.isfinite(a).all():
        return math.inf
    d = (a - b).norm().item()
    n = b.norm().item()
    return d / n if n > 0 else d


def evaluate(c, inp, o, ht, pool_after, pool_before, track=None):
    res = {}
    o_ref = inp["o_ref"].clone()
    padded = inp["padded"]
    rows = inp["rows"]
    for n, b, s, e in rows:
        if padded[n]:
            o_ref[b, s:e] = 0
    res["o_nonfinite"] = not bool(torch.isfinite(o.double()).all())
    res["o"] = rel(o, o_ref)
    gnorm = o_ref.norm().item()
    worst = 0.0
    for n, b, s, e in rows:
        if e == s:
            continue
        for h in range(o.shape[2]):
            ref = o_ref[b, s:e, h].double()
            out = o[b, s:e, h].double()
            if padded[n]:
                if not torch.equal(out, torch.zeros_like(out)):
                    res.setdefault("pad_nonzero", []).append(n)
                continue
            den = max(ref.norm().item(), 1e-3 * gnorm / math.sqrt(max(1, inp["N"] * o.shape[2])), 1e-12)
            err = (out - ref).norm().item() / den if torch.isfinite(out).all() else math.inf
            worst = max(worst, err)
    res["o_piece"] = worst
    s_err = 0.0
    if c["state"] == "pool":
        exp_pool, written = inp["exp_pool"], inp["written"]
        for sl in sorted(written):
            s_err = max(s_err, rel(pool_after[sl], exp_pool[sl]))
        bad = []
        pb = pool_before.view(torch.int32)
        pa = pool_after.view(torch.int32)
        for sl in range(pool_before.shape[0]):
            if sl not in written and not torch.equal(pa[sl], pb[sl]):
                bad.append(sl)
        if bad:
            res["untouched_changed"] = bad
        if c["ofs"] and ht is not None and ht.data_ptr() != pool_after.data_ptr():
            res["ofs_not_pool"] = True
    elif c["ofs"]:
        if ht is None:
            res["ht_missing"] = True
        else:
            for n in range(inp["N"]):
                s_err = max(s_err, rel(ht[n], inp["s_ref"][n]))
    res["state"] = s_err
    if track is not None:
        t_err = 0.0
        et = inp["exp_track"]
        for n, j in enumerate(inp["track_idx"].tolist()):
            if j < 0:
                if not torch.isnan(track[n]).all():
                    res.setdefault("track_untouched_changed", []).append(n)
            else:
                t_err = max(t_err, rel(track[n], et[n]))
        res["track"] = t_err
    return res


def tolerances(c):
    fp16 = c["dtype"] == "fp16"
    if c["op"] == "prefill":
        t = 6e-3 if fp16 else 3e-3
        return t, t
    return (2e-3 if fp16 else 1e-4), 1e-4 if not fp16 else 2e-3


def run_one(c, verbose=False):
    inp = make_inputs(c)
    set_internals(c)
    try:
        plan = describe_plan(c, inp)
    except ZeroDivisionError:
        plan = None
    out = {"cfg": c, "plan": plan}
    results = {}
    for backend in ("triton", "torch"):
        pool = inp["h0"].clone() if c["state"] == "pool" else None
        pool_before = pool.clone() if pool is not None else None
        track = inp["track"].clone() if inp["track"] is not None else None
        try:
            o, ht = call(c, inp, backend, pool, track)
            if c.get("repeat") and backend == "triton":
                pool2 = inp["h0"].clone() if c["state"] == "pool" else None
                track2 = inp["track"].clone() if inp["track"] is not None else None
                o2, ht2 = call(c, inp, backend, pool2, track2)
                same = torch.equal(o.view(-1).view(torch.int16 if o.dtype == torch.float16 else torch.int32),
                                   o2.view(-1).view(torch.int16 if o.dtype == torch.float16 else torch.int32))
                if pool is not None:
                    same = same and torch.equal(pool.view(torch.int32), pool2.view(torch.int32))
                if not same:
                    out["nondeterministic"] = True
        except Exception as ex:  # noqa: BLE001
            out[backend + "_exc"] = f"{type(ex).__name__}: {ex}"[:400]
            results[backend] = None
            continue
        r = evaluate(c, inp, o, ht, pool, pool_before, track)
        results[backend] = (o, ht, pool)
        out[backend] = r
    set_internals({"op": "none"})  # restore
    # triton vs torch
    if results.get("triton") is not None and results.get("torch") is not None:
        (ot, htt, pt), (oc, htc, pc) = results["triton"], results["torch"]
        out["tt_o"] = rel(ot, oc)
        if c["state"] == "pool":
            sl = sorted(inp["written"])
            out["tt_s"] = rel(pt[sl], pc[sl]) if sl else 0.0
        elif c["ofs"] and htt is not None and htc is not None:
            out["tt_s"] = rel(htt, htc)
    # verdict
    to, ts = tolerances(c)
    flags = []
    for be in ("triton", "torch"):
        if be + "_exc" in out:
            flags.append(f"{be}:exception")
            continue
        r = out[be]
        if r["o_nonfinite"]:
            flags.append(f"{be}:o_nonfinite")
        if r["o"] > to:
            flags.append(f"{be}:o {r['o']:.2e}")
        if r["o_piece"] > max(10 * to, 1e-2):
            flags.append(f"{be}:o_piece {r['o_piece']:.2e}")
        if r["state"] > ts:
            flags.append(f"{be}:state {r['state']:.2e}")
        if r.get("track", 0) > ts:
            flags.append(f"{be}:track {r['track']:.2e}")
        for key in ("untouched_changed", "pad_nonzero", "ht_missing", "ofs_not_pool", "track_untouched_changed"):
            if key in r:
                flags.append(f"{be}:{key}={r[key]}")
    if out.get("tt_o", 0) > 2 * to:
        flags.append(f"tt_o {out['tt_o']:.2e}")
    if out.get("tt_s", 0) > 2 * ts:
        flags.append(f"tt_s {out['tt_s']:.2e}")
    if out.get("nondeterministic"):
        flags.append("nondeterministic")
    out["flags"] = flags
    return out


def main():
    op = sys.argv[1]
    if sys.argv[2] == "--one":
        c = choose_cfg(op, int(sys.argv[3]))
        r = run_one(c)
        print(json.dumps(r, indent=1, default=str))
        return
    start, count = int(sys.argv[2]), int(sys.argv[3])
    deadline = time.time() + float(sys.argv[4]) if len(sys.argv) > 4 else math.inf
    log = open(f"/tmp/fuzz_kda/log2_{op}_{start}.jsonl", "a")
    nfail = 0
    for seed in range(start, start + count):
        if time.time() > deadline:
            break
        c = choose_cfg(op, seed)
        t0 = time.time()
        try:
            r = run_one(c)
        except Exception as ex:  # noqa: BLE001
            r = {"cfg": c, "flags": [f"harness:{type(ex).__name__}: {ex}"], "tb": traceback.format_exc()[-1500:]}
        r["time"] = round(time.time() - t0, 2)
        log.write(json.dumps(r, default=str) + "\n"); log.flush()
        if r["flags"]:
            nfail += 1
            print(seed, r["flags"], json.dumps(c), flush=True)
    print("done", op, "fails", nfail, flush=True)


if __name__ == "__main__":
    main()
