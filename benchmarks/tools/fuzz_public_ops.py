"""Random public calls of ``kimiops.chunk_kda`` and ``kimiops.fused_recurrent_kda``, each run with
``backend="triton"`` (on CPU tensors the kernels in Triton's interpreter; with ``--device cuda``
the compiled kernels) and ``backend="torch"``, against the fp64 recurrence
(``kimiops.kda.reference.naive_recurrent_kda``, on the CPU) built from the same inputs.

Each call draws its options together, so combinations the unit tests take one at a time meet:
head dims, GVA, fp16 / fp32 inputs, batch or varlen layouts (zero-length sequences included), the
three gate modes (precomputed g, softplus with or without dt_bias, lower bound with or without
A_log), the in-kernel L2 norm, beta as logits (and ``allow_neg_eigval``), scale, no state / a dense
initial state / a pool with indices (-1, and ``pad_slot_id=0`` for decode), both state layouts,
``output_final_state``, and for decode vLLM's speculative form (2-D indices with
``num_accepted_tokens``), for prefill state snapshots (``track_state`` / ``track_chunk_idx``); g
and beta in fp32 beside half q, k, v, A_log and dt_bias in half precision, and inputs as strided
views of fused projections. On CUDA, inputs may also be bf16 and decode pools
bf16.

What it checks, per call and backend:
- the output and the states are finite and within ``--tol`` (relative, fp64) of the reference;
- decode rows of padded sequences are exactly zero;
- every pool slot the call may not write (not named, or named by padding) is bit-identical
  afterwards: those slots are poisoned with NaN before the call.

Prints one line per failing call (and every call with ``-v``); exits 1 if any failed.

    PYTHONPATH=$PWD python3 benchmarks/tools/fuzz_public_ops.py [--calls 60] [--seed 0] [--big-dims 0]
        [--device cpu|cuda] [--compile] [-v]

``tests/kda/test_ops.py`` runs a few calls of it (:func:`fuzz`) on the test device.
"""
import argparse
import os
import sys

if __name__ == "__main__" and "cuda" not in sys.argv[1:]:  # before triton is imported
    os.environ["TRITON_INTERPRET"] = "1"

import torch  # noqa: E402

import kimiops  # noqa: E402
from kimiops.kda.gate import beta_from_logits, kda_gate, l2norm  # noqa: E402
from kimiops.kda.reference import naive_recurrent_kda  # noqa: E402
from kimiops.kda.track import TRACK_CHUNK  # noqa: E402
from kimiops.testing import rel_err  # noqa: E402


class Draw:
    """Random choices from one seeded generator."""

    def __init__(self, seed: int):
        self.gen = torch.Generator().manual_seed(seed)

    def pick(self, xs):
        return xs[int(torch.randint(len(xs), (1,), generator=self.gen))]

    def coin(self, p: float = 0.5) -> bool:
        return float(torch.rand(1, generator=self.gen)) < p

    def ints(self, lo: int, hi: int, n: int) -> list[int]:
        return [int(x) for x in torch.randint(lo, hi + 1, (n,), generator=self.gen)]

    def randn(self, *shape) -> torch.Tensor:
        return torch.randn(*shape, generator=self.gen, dtype=torch.float64)

    def rand(self, *shape) -> torch.Tensor:
        return torch.rand(*shape, generator=self.gen, dtype=torch.float64)


def draw_call(d: Draw, big_dims: float = 0.0, cuda: bool = False) -> dict:
    """One call's options: head dims 16-64, or with probability ``big_dims`` 64-256 with prompts
    of up to 40 tokens (no draw is made for it at 0). ``cuda``: also bf16 inputs and bf16 decode pools."""
    c = {"op": d.pick(["chunk_kda", "fused_recurrent_kda"])}
    decode = c["op"] == "fused_recurrent_kda"
    big = big_dims > 0 and d.coin(big_dims)
    dims = [64, 128, 256] if big else [16, 32, 64]
    c["K"], c["V"] = d.pick(dims), d.pick(dims)
    c["H"] = d.pick([1, 2])
    c["HV"] = c["H"] * d.pick([1, 2])
    c["dtype"] = d.pick([torch.float16, torch.float32])
    longest = 5 if decode else (40 if big else 80)
    c["spec"] = decode and d.coin(0.25)
    if d.coin() or c["spec"]:
        lens = d.ints(0, longest, d.pick([1, 2, 3, 4]))
        if c["spec"]:
            lens = [max(x, 1) for x in lens]  # vLLM's verification: at least one token per sequence
        c["lens"], c["B"] = lens, 1
    else:
        c["B"] = d.pick([1, 2, 3])
        c["lens"] = [d.pick([1, 2, 3]) if decode else max(d.ints(0, longest, 1)[0], 1)] * c["B"]
    c["varlen"] = c["B"] == 1 and (len(c["lens"]) > 1 or c["spec"] or d.coin())
    c["gate"] = d.pick(["precomputed", "softplus", "lower_bound"])
    c["dt_bias"] = c["gate"] != "precomputed" and d.coin(0.7)
    c["A_log"] = c["gate"] == "softplus" or (c["gate"] == "lower_bound" and d.coin(0.7))
    c["lower_bound"] = -float(d.rand(1) * 4.9 + 0.1) if c["gate"] == "lower_bound" else None
    c["l2norm"] = d.coin(0.7)
    c["sigmoid"] = d.coin(0.7)
    c["neg_eigval"] = c["sigmoid"] and d.coin(0.3)
    c["scale"] = None if d.coin() else float(d.rand(1) * 0.9 + 0.05)
    c["state"] = "pool" if c["spec"] else d.pick(["none", "dense", "pool"])
    c["v_first"] = d.coin()
    c["final"] = d.coin()
    c["pad_slot_id"] = -1 if not (decode and c["state"] == "pool") else d.pick([-1, -1, 0])
    c["pool_dtype"] = torch.float32
    half = [torch.float16, torch.bfloat16] if cuda else [torch.float16]
    if cuda:
        c["dtype"] = d.pick([torch.bfloat16, c["dtype"]])
        if decode and c["state"] == "pool":
            c["pool_dtype"] = d.pick([torch.float32, torch.bfloat16])
    c["g_dtype"] = d.pick([c["dtype"], torch.float32])  # FLA takes g and beta in fp32 beside bf16 q, k, v
    c["beta_dtype"] = d.pick([c["dtype"], torch.float32])
    c["param_dtype"] = d.pick([torch.float32, *half])  # A_log and dt_bias (checkpoints may keep them in bf16)
    c["fused"] = d.coin()  # q, k, v, g as views of fused projections, beta a strided column slice
    c["track"] = not decode and d.coin(0.3)  # prefix-caching snapshots (track_state / track_chunk_idx)
    return c


def make_tensors(d: Draw, c: dict) -> dict:
    N = len(c["lens"]) if c["varlen"] else c["B"]
    T = sum(c["lens"]) if c["varlen"] else c["lens"][0]
    B, H, HV, K, V = (1 if c["varlen"] else c["B"]), c["H"], c["HV"], c["K"], c["V"]
    qk_scale = 1.0 if not c["l2norm"] else d.pick([1.0, 30.0])
    x = {
        "q": d.randn(B, T, H, K) * qk_scale, "k": d.randn(B, T, H, K) * qk_scale, "v": d.randn(B, T, HV, V),
        "beta": d.randn(B, T, HV) if c["sigmoid"] else d.rand(B, T, HV) * 0.9 + 0.05,
    }
    if not c["l2norm"]:
        x["q"], x["k"] = l2norm(x["q"]), l2norm(x["k"])
    if c["gate"] == "precomputed":
        x["g"] = -d.rand(B, T, HV, K) * d.pick([0.1, 3.0])
    else:
        x["g"] = d.randn(B, T, HV, K) * d.pick([1.0, 5.0])
        x["A_log"] = torch.log(d.rand(HV) * d.pick([8.0, 199.0]) + 1) if c["A_log"] else None
        x["dt_bias"] = d.randn(HV * K) if c["dt_bias"] else None
    x = {n: t.to(c["dtype"]) if n in ("q", "k", "v") else t.to(c["g_dtype"]) if n == "g" else
         t.to(c["beta_dtype"]) if n == "beta" else t if t is None else t.to(c["param_dtype"]) for n, t in x.items()}
    x["cu"] = torch.tensor([0] + torch.tensor(c["lens"]).cumsum(0).tolist(), dtype=d.pick([torch.int32, torch.int64])) \
        if c["varlen"] else None
    shape = (V, K) if c["v_first"] else (K, V)
    if c["state"] == "dense":
        x["state"] = d.randn(N, HV, *shape).float()
    elif c["state"] == "pool":
        cols = max(c["lens"]) if c["spec"] else 1
        slots = N * cols + d.pick([1, 3])
        perm = torch.randperm(slots, generator=d.gen)[: N * cols].reshape(N, cols).to(torch.int32)
        if c["pad_slot_id"] == 0:
            perm = torch.where(perm == 0, torch.full_like(perm, -1), perm)
        if c["spec"]:  # only the first len_n columns are used: -1 beyond them, as vLLM pads
            for n, ln in enumerate(c["lens"]):
                perm[n, ln:] = -1
            x["num_accepted"] = torch.tensor([d.ints(1, ln, 1)[0] for ln in c["lens"]], dtype=torch.int32)
        pad = [n for n in range(N) if d.coin(0.25)]
        for n in pad:
            perm[n, 0 if not c["spec"] else int(x["num_accepted"][n]) - 1] = -1
        x["indices"] = perm if c["spec"] else perm[:, 0].contiguous()
        x["pool"] = d.randn(slots, HV, *shape).to(c["pool_dtype"])
    if c["track"]:
        x["track_idx"] = torch.tensor([d.pick([-1, *range(ln // TRACK_CHUNK + 1)]) for ln in c["lens"]],
                                      dtype=torch.int32)
    return x


def reference(c: dict, x: dict):
    """fp64 ``(o, states after the call, {pool slot the call writes: its state after the call},
    padded sequences, snapshots or None)``; snapshot rows of index -1 are NaN (the call may not
    write them)."""
    decode = c["op"] == "fused_recurrent_kda"
    q, k, v, g, beta = (x[n].double() for n in ("q", "k", "v", "g", "beta"))
    if c["l2norm"]:
        q, k = l2norm(q), l2norm(k)
    if c["sigmoid"]:
        beta = beta_from_logits(beta, c["neg_eigval"])
    if c["gate"] != "precomputed":
        g = kda_gate(g, x["A_log"], x["dt_bias"], c["lower_bound"], output_dtype=torch.float64)
    N = len(c["lens"]) if c["varlen"] else c["B"]
    pad_limit = c["pad_slot_id"]
    padded, h0 = [], None
    if c["state"] == "dense":
        h0 = x["state"].double()
    elif c["state"] == "pool":
        pool = x["pool"].double()
        idx = x["indices"]
        start = idx if not c["spec"] else idx[torch.arange(N), x["num_accepted"].long() - 1]
        h0 = torch.zeros(N, *pool.shape[1:], dtype=torch.float64)
        for n in range(N):
            if int(start[n]) > pad_limit:
                h0[n] = pool[int(start[n])]
            else:
                padded.append(n)
    o, ht, per_token = naive_recurrent_kda(q, k, v, g, beta, scale=c["scale"], initial_state=h0,
                                          output_final_state=True, cu_seqlens=x["cu"], state_v_first=c["v_first"],
                                          token_states=True)
    bounds = x["cu"].tolist() if c["varlen"] else None
    rows = lambda n: (0, slice(bounds[n], bounds[n + 1])) if c["varlen"] else (n, slice(None))  # noqa: E731
    if decode:
        for n in padded:
            o[rows(n)] = 0
    snaps = None
    if c["track"]:
        snaps = torch.full((N, *ht.shape[1:]), float("nan"), dtype=torch.float64)
        for n, j in enumerate(x["track_idx"].tolist()):
            b, sl = rows(n)
            if j == 0:
                snaps[n] = h0[n] if h0 is not None else 0.0
            elif j > 0:
                snaps[n] = per_token[b, (sl.start or 0) + j * TRACK_CHUNK - 1]
    written = {}
    if c["state"] == "pool":
        for n in range(N):
            if decode and n in padded:
                continue
            b, sl = rows(n)
            if c["spec"]:  # the state after each token, to that token's slot
                for j, t in enumerate(range(sl.start, sl.stop)):
                    slot = int(x["indices"][n, j])
                    if slot > pad_limit:
                        written[slot] = per_token[b, t]
            else:  # the final state, to the start slot, unless the sequence has no tokens
                slot = int(x["indices"][n])
                n_tokens = (sl.stop - sl.start) if c["varlen"] else per_token.shape[1]
                if slot > pad_limit and n_tokens > 0:
                    written[slot] = ht[n]
    return o, ht, written, padded, snaps


def call_args(c: dict, x: dict, backend: str, device: torch.device):
    """The public call on ``device`` as ``(op, positional inputs, keywords, pool or None)``."""
    decode = c["op"] == "fused_recurrent_kda"
    on = lambda t: None if t is None else t.to(device)  # noqa: E731
    kw = dict(scale=c["scale"], output_final_state=c["final"], use_qk_l2norm_in_kernel=c["l2norm"],
              use_gate_in_kernel=c["gate"] != "precomputed", use_beta_sigmoid_in_kernel=c["sigmoid"],
              A_log=on(x.get("A_log")), dt_bias=on(x.get("dt_bias")), lower_bound=c["lower_bound"],
              state_v_first=c["v_first"], cu_seqlens=on(x["cu"]), allow_neg_eigval=c["neg_eigval"], backend=backend)
    pool = None
    if c["state"] == "dense":
        kw["initial_state"] = on(x["state"].clone())
    elif c["state"] == "pool":
        pool = on(poisoned_pool(c, x))
        kw["initial_state"] = pool
        kw["ssm_state_indices" if decode else "initial_state_indices"] = on(x["indices"])
        if c["spec"]:
            kw["num_accepted_tokens"] = on(x["num_accepted"])
        if c["pad_slot_id"] != -1:
            kw["pad_slot_id"] = c["pad_slot_id"]
    if c["track"]:
        N = x["track_idx"].shape[0]
        shape = (c["V"], c["K"]) if c["v_first"] else (c["K"], c["V"])
        kw["track_state"] = torch.full((N, c["HV"], *shape), float("nan"), device=device)
        kw["track_chunk_idx"] = on(x["track_idx"])
    fn = kimiops.fused_recurrent_kda if decode else kimiops.chunk_kda
    ins = [on(x[n]) for n in ("q", "k", "v", "g", "beta")]
    return fn, list(fused_views(*ins) if c["fused"] else ins), kw, pool


def run_op(c: dict, x: dict, backend: str, device: torch.device):
    """The public call on ``device``; returns ``(o, final state, pool after, final state is the pool,
    snapshots)`` with the tensors back on the CPU."""
    fn, ins, kw, pool = call_args(c, x, backend, device)
    o, ht = fn(*ins, **kw)
    is_pool = ht is pool and pool is not None
    return o.cpu(), on_cpu(ht), on_cpu(pool), is_pool, on_cpu(kw.get("track_state"))


def check_compiled(c: dict, x: dict, backend: str, device: torch.device) -> list[str]:
    """The call traced by ``torch.compile(fullgraph=True, backend="aot_eager")`` (the registered
    custom op's fake implementation sets every shape and stride) against the same call eager: the
    same bits in o, the final state, the pool and the snapshots."""
    fn, ins, kw, _ = call_args(c, x, backend, device)
    tensors = {n: t for n, t in kw.items() if isinstance(t, torch.Tensor)}
    static = {n: v for n, v in kw.items() if n not in tensors}

    def call(ins, tensors):
        o, ht = fn(*ins, **tensors, **static)
        return o * 1, None if ht is None or ht is tensors.get("initial_state") else ht * 1

    mutable = ("initial_state", "track_state")
    eager_t = {n: t.clone() if n in mutable else t for n, t in tensors.items()}
    compiled_t = {n: t.clone() if n in mutable else t for n, t in tensors.items()}
    torch._dynamo.reset()
    want = call(ins, eager_t)
    got = torch.compile(call, fullgraph=True, backend="aot_eager")(ins, compiled_t)
    errs = []
    for name, a, b in (("o", got[0], want[0]), ("final state", got[1], want[1]),
                       *((n, compiled_t[n], eager_t[n]) for n in mutable if n in tensors)):
        if (a is None) != (b is None) or a is not None and not same_bits(a, b):
            errs.append(f"compiled: {name} differs from the eager call's")
    return errs


def fused_views(q, k, v, g, beta):
    """The same values as an engine's fused projections hand them over: q, k, v slices of one
    ``[B, T, 2 H K + HV V + 8]`` tensor and g of a ``[B, T, HV K + 8]`` one (head dim contiguous,
    token stride wider than the heads), beta a column slice of ``[B, T, HV + 3]`` starting at 1."""
    B, T, H, K = q.shape
    HV, V = v.shape[2], v.shape[3]
    widths = (H * K, H * K, HV * V)
    qkv = torch.full((B, T, sum(widths) + 8), float("nan"), dtype=q.dtype, device=q.device)
    views, at = [], 0
    for t, w in zip((q, k, v), widths):
        view = qkv[..., at:at + w].view(t.shape)
        view.copy_(t)
        views.append(view)
        at += w
    g_view = torch.full((B, T, HV * K + 8), float("nan"), dtype=g.dtype, device=g.device)[..., :HV * K].view(g.shape)
    g_view.copy_(g)
    b_view = torch.full((B, T, HV + 3), float("nan"), dtype=beta.dtype, device=beta.device)[..., 1:HV + 1]
    b_view.copy_(beta)
    return (*views, g_view, b_view)


def same_bits(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Whether ``a`` and ``b`` hold the same bytes (NaN poison included)."""
    return a.shape == b.shape and a.dtype == b.dtype and \
        torch.equal(a.contiguous().view(torch.uint8), b.contiguous().view(torch.uint8))


def on_cpu(t):
    return None if t is None else t.cpu()


def poisoned_pool(c: dict, x: dict) -> torch.Tensor:
    """The pool with NaN in every slot the call reads nothing from (so a stray read or write shows)."""
    pool = x["pool"].clone()
    idx = x["indices"]
    N = idx.shape[0]
    read = idx if not c["spec"] else idx[torch.arange(N), x["num_accepted"].long() - 1]
    keep = {int(s) for s in read.tolist() if s > c["pad_slot_id"]}
    for s in range(pool.shape[0]):
        if s not in keep:
            pool[s] = float("nan")
    return pool


def check(c: dict, x: dict, backend: str, ref, tol: float, device: torch.device = torch.device("cpu")) -> list[str]:
    """What is wrong with one backend's call (empty: nothing)."""
    ro, rht, written, padded, rsnaps = ref
    o, ht, pool, is_pool, snaps = run_op(c, x, backend, device)
    errs = []
    if o.shape != ro.shape or o.dtype != x["v"].dtype:
        return [f"o: shape {tuple(o.shape)} dtype {o.dtype}, expected {tuple(ro.shape)} {x['v'].dtype}"]
    e = rel_err(o, ro)
    if not e <= tol:
        errs.append(f"o rel err {e:.2e}")
    if c["op"] == "fused_recurrent_kda" and padded:
        bounds = x["cu"].tolist() if c["varlen"] else None
        for n in padded:
            rows = o[0, bounds[n]:bounds[n + 1]] if c["varlen"] else o[n]
            if rows.numel() and not bool((rows == 0).all()):
                errs.append(f"padded sequence {n}: output rows not zero")
    if c["state"] == "pool":
        if c["final"] and not is_pool:
            errs.append("final state: expected the pool itself in pool mode")
        before = poisoned_pool(c, x)
        for s in range(pool.shape[0]):
            if s in written:
                es = rel_err(pool[s], written[s])
                if not es <= tol:
                    errs.append(f"slot {s}: state rel err {es:.2e}")
            elif not same_bits(pool[s], before[s]):
                errs.append(f"slot {s}: changed, but the call may not write it")
    elif c["final"]:
        if ht is None:
            errs.append("final state: None although output_final_state=True")
        else:
            es = rel_err(ht, rht)
            if not es <= tol:
                errs.append(f"final state rel err {es:.2e}")
    elif ht is not None:
        errs.append("final state returned although output_final_state=False")
    if c["track"]:
        for n, j in enumerate(x["track_idx"].tolist()):
            if j < 0 and not bool(snaps[n].isnan().all()):
                errs.append(f"snapshot row {n}: written although its index is -1")
            elif j >= 0 and not rel_err(snaps[n], rsnaps[n]) <= tol:
                errs.append(f"snapshot row {n} (chunk {j}): rel err {rel_err(snaps[n], rsnaps[n]):.2e}")
    return errs


def describe(c: dict) -> str:
    bits = [c["op"], f"K={c['K']} V={c['V']} H={c['H']} HV={c['HV']}", str(c["dtype"])[6:],
            f"lens={c['lens']}" + (" varlen" if c["varlen"] else f" B={c['B']}"), c["gate"]]
    bits += [n for n in ("dt_bias", "A_log", "l2norm", "sigmoid", "neg_eigval", "v_first", "final", "spec") if c[n]]
    bits += [f"state={c['state']}"] + ([f"pad_slot_id={c['pad_slot_id']}"] if c["pad_slot_id"] != -1 else [])
    if c["lower_bound"] is not None:
        bits.append(f"lb={c['lower_bound']:.2f}")
    if c["scale"] is not None:
        bits.append(f"scale={c['scale']:.2f}")
    if c["pool_dtype"] != torch.float32:
        bits.append("pool=bfloat16")
    for n in ("g_dtype", "beta_dtype", "param_dtype"):
        if c[n] != c["dtype"] and (n != "param_dtype" or c["gate"] != "precomputed"):
            bits.append(f"{n[:-6]}={str(c[n])[6:]}")
    if c["fused"]:
        bits.append("fused")
    if c["track"]:
        bits.append("track")
    return " ".join(bits)


def fuzz(calls: int, seed: int = 0, *, big_dims: float = 0.0, device="cpu", tol: float = 3e-3,
         compiled: bool = False, out=print, verbose: bool = False, backends=("triton", "torch")) -> int:
    """Run ``calls`` random calls (call ``i`` drawn from seed ``seed * 100003 + i``) with each of
    ``backends`` on ``device`` (with ``compiled``, also each traced by ``torch.compile`` against the
    eager call); reports each failing call (every call with ``verbose``) through ``out`` and returns
    the number that failed. On CPU tensors ``TRITON_INTERPRET=1`` must have been set before triton
    was imported."""
    device = torch.device(device)
    failed = 0
    for i in range(calls):
        d = Draw(seed * 100003 + i)
        c = draw_call(d, big_dims, cuda=device.type == "cuda")
        x = make_tensors(d, c)
        ref = reference(c, x)
        lines = []
        for backend in backends:
            try:
                errs = check(c, x, backend, ref, tol, device)
                if compiled and not errs:
                    errs = check_compiled(c, x, backend, device)
            except Exception as exc:  # a valid call must not raise: report it as a failure
                errs = [f"raised {type(exc).__name__}: {exc}"]
            if errs:
                lines.append(f"{backend}: " + "; ".join(errs))
        if lines:
            failed += 1
            out(f"[{i}] FAIL {describe(c)}\n      " + "\n      ".join(lines))
        elif verbose:
            out(f"[{i}] ok   {describe(c)}")
    return failed


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=60)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--tol", type=float, default=3e-3, help="relative error limit (the issue's o limit)")
    ap.add_argument("--big-dims", type=float, default=0.0,
                    help="probability of head dims 128 / 256 per call (interpreter time grows with them)")
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument("--compile", action="store_true",
                    help="also trace each call with torch.compile (fullgraph, aot_eager) against the eager one")
    ap.add_argument("--backends", default="triton,torch",
                    help="comma-separated backends to check each call with (triton alone under a sanitizer)")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    backends = tuple(args.backends.split(","))
    if set(backends) - {"triton", "torch"}:
        ap.error(f"--backends: expected triton and/or torch, got {args.backends!r}")
    failed = fuzz(args.calls, args.seed, big_dims=args.big_dims, device=args.device, tol=args.tol,
                  compiled=args.compile, out=lambda line: print(line, flush=True), verbose=args.verbose,
                  backends=backends)
    print(f"{args.calls} calls, seed {args.seed}, {args.device}: {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
