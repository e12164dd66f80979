"""An engine's sequence of ``KDABackend`` calls over one state pool, against an fp64 model of every
request's state: requests arrive (``extend`` into a freshly zeroed slot), continue their prefill in
pieces, decode one token per step in batches whose composition, order and size change every step,
and finish (their slots are freed). Batches carry padded requests (slot -1) and CUDA-graph padding
token rows past ``query_start_loc[-1]`` (or past the requests, for decode), filled with NaN; g and
beta carry extra rows, as the backend allows. With ``--verify``, speculative rounds as SGLang runs
them come between steps: ``target_verify`` of draft chains into a buffer, then the engine copies the
state after an accepted token into the request's slot.

What it checks after every call:
- each real request's output rows against the fp64 recurrence from its modelled state (``--tol``);
  padded decode requests' rows and the rows of padding tokens past ``query_start_loc[-1]`` exactly
  zero;
- each live request's slot against its modelled state;
- free slots (poisoned with NaN) bit-identical: no call may write them;
- ``target_verify``: the pool bit-identical, each draft token's state in its buffer row, nothing
  written past a request's tokens or into rows no request names.

On a GPU (``--device cuda``) the calls after the first of a signature take the eager shortcut
(``kimiops.kda.runner``; decode at a new batch size through its elastic entries), so the run also
checks that cached launches follow the changing batches. On the CPU the kernels run in Triton's
interpreter.

    PYTHONPATH=$PWD python3 benchmarks/tools/fuzz_serving_steps.py [--steps 40] [--seed 0]
        [--device cpu|cuda] [--backend triton|torch] [--verify 0.3] [-v]
"""
import argparse
import os
import sys

if __name__ == "__main__" and "cuda" not in sys.argv[1:]:  # before triton is imported
    os.environ["TRITON_INTERPRET"] = "1"

import torch  # noqa: E402

import kimiops  # noqa: E402
from fuzz_public_ops import same_bits  # noqa: E402
from kimiops.kda.gate import beta_from_logits, kda_gate, l2norm  # noqa: E402
from kimiops.kda.reference import naive_recurrent_kda  # noqa: E402
from kimiops.testing import rel_err  # noqa: E402


class Model:
    """One KDA layer's dims, gate and dtype, drawn from ``gen``."""

    def __init__(self, gen: torch.Generator, cuda: bool):
        pick = lambda xs: xs[int(torch.randint(len(xs), (1,), generator=gen))]  # noqa: E731
        self.H = pick([1, 2])
        self.HV = self.H * pick([1, 2])
        dims = [32, 64, 128] if cuda else [16, 32]
        self.K, self.V = pick(dims), pick(dims)
        self.dtype = pick([torch.bfloat16, torch.float16]) if cuda else pick([torch.float16, torch.float32])
        self.gate = pick(["none", "softplus", "lower_bound"])
        self.gate_kwargs = {}
        if self.gate == "softplus":
            self.gate_kwargs = {"A_log": torch.log(torch.rand(self.HV, generator=gen) * 20 + 1),
                                "dt_bias": torch.randn(self.HV * self.K, generator=gen)}
        elif self.gate == "lower_bound":
            self.gate_kwargs = {"A_log": torch.log(torch.rand(self.HV, generator=gen) * 20 + 1),
                                "lower_bound": -float(torch.rand(1, generator=gen) * 4.9 + 0.1)}

    def describe(self) -> str:
        return f"H={self.H} HV={self.HV} K={self.K} V={self.V} {str(self.dtype)[6:]} gate={self.gate}"

    def tokens(self, T: int, gen: torch.Generator) -> list[torch.Tensor]:
        """Raw projections of T tokens (fp64): q, k (not normalized), v, g (logits, or log decay
        without a gate), beta logits."""
        q = torch.randn(T, self.H, self.K, generator=gen, dtype=torch.float64) * 3
        k = torch.randn(T, self.H, self.K, generator=gen, dtype=torch.float64) * 3
        v = torch.randn(T, self.HV, self.V, generator=gen, dtype=torch.float64)
        if self.gate == "none":
            g = -torch.rand(T, self.HV, self.K, generator=gen, dtype=torch.float64) * 0.5
        else:
            g = torch.randn(T, self.HV, self.K, generator=gen, dtype=torch.float64) * 2
        beta = torch.randn(T, self.HV, generator=gen, dtype=torch.float64)
        return [t.to(self.dtype).double() for t in (q, k, v, g, beta)]

    def run_reference(self, toks: list[torch.Tensor], state: torch.Tensor, token_states: bool = False):
        """fp64 outputs ``[T, HV, V]`` and the state after them (``[HV, V, K]``) from ``state``; with
        ``token_states`` also the state after every token ``[T, HV, V, K]``."""
        q, k, v, g, beta = toks
        if self.gate != "none":
            kw = {n: (t.double() if isinstance(t, torch.Tensor) else t) for n, t in self.gate_kwargs.items()}
            g = kda_gate(g, kw.get("A_log"), kw.get("dt_bias"), kw.get("lower_bound"), output_dtype=torch.float64)
        o, ht, after = naive_recurrent_kda(l2norm(q)[None], l2norm(k)[None], v[None], g[None],
                                           beta_from_logits(beta)[None], initial_state=state[None],
                                           output_final_state=True, state_v_first=True, token_states=True)
        return (o[0], ht[0], after[0]) if token_states else (o[0], ht[0])


def simulate(steps: int, seed: int = 0, *, device="cpu", backend: str = "triton", tol: float = 3e-3,
             slots: int = 12, verify: float = 0.0, out=print, verbose: bool = False) -> int:
    """Run ``steps`` backend calls of one simulated engine; returns the number of failed checks
    (each reported through ``out``). ``verify``: the probability of a speculative round before a
    step (``target_verify`` of draft tokens, then the engine keeping the state after an accepted
    token); its draws come from a generator of their own, so the steps draw what they draw at 0."""
    device = torch.device(device)
    gen = torch.Generator().manual_seed(seed)
    rint = lambda lo, hi: int(torch.randint(lo, hi + 1, (1,), generator=gen))  # noqa: E731
    m = Model(gen, device.type == "cuda")
    be = kimiops.KDABackend(m.H, m.K, m.V, num_v_heads=m.HV, backend=backend)
    gate_kw = {n: (t.to(device) if isinstance(t, torch.Tensor) else t) for n, t in m.gate_kwargs.items()}
    pool = torch.full((slots, m.HV, m.V, m.K), float("nan"), device=device)
    live: dict[int, torch.Tensor] = {}  # slot -> fp64 state [HV, V, K]
    failures = 0
    if verbose:
        out(f"seed {seed}: {m.describe()}, {slots} slots, backend {backend} on {device}")

    def fail(step, what):
        nonlocal failures
        failures += 1
        out(f"[seed {seed} step {step}] {what} ({m.describe()})")

    vgen = torch.Generator().manual_seed(seed + 1_000_003)

    def verify_round(step):
        """SGLang's speculative round: draft chains verified into a buffer with the pool read only,
        then for each request the buffer row of an accepted token copied into its slot."""
        vint = lambda lo, hi: int(torch.randint(lo, hi + 1, (1,), generator=vgen))  # noqa: E731
        most = 4  # cache_steps
        reqs = [s for s in live if torch.rand(1, generator=vgen) < 0.7] or [next(iter(live))]
        reqs = [reqs[i] for i in torch.randperm(len(reqs), generator=vgen).tolist()]
        lens = [vint(1, most) for _ in reqs]
        for _ in range(vint(0, 1)):  # a padded request
            at = vint(0, len(reqs))
            reqs.insert(at, -1)
            lens.insert(at, vint(1, most))
        N, T = len(reqs), sum(lens)
        toks = m.tokens(T, vgen)
        rows = [int(r) if s >= 0 else -1 for r, s in zip(torch.randperm(N + 1, generator=vgen)[:N].tolist(), reqs)]
        buffer = torch.full((N + 1, most, m.HV, m.V, m.K), float("nan"), device=device)
        cu = torch.tensor([0] + torch.tensor(lens).cumsum(0).tolist(), dtype=torch.int32, device=device)
        before = pool.clone()
        try:
            o = be.target_verify(*(t.to(m.dtype).to(device) for t in toks), ssm_states=pool,
                                 cache_indices=torch.tensor(reqs, dtype=torch.int32, device=device),
                                 query_start_loc=cu, intermediate_states_buffer=buffer,
                                 intermediate_state_indices=torch.tensor(rows, dtype=torch.int32, device=device),
                                 cache_steps=most, **gate_kw)
        except Exception as exc:  # a valid call must not raise
            fail(step, f"target_verify of {N} requests raised {type(exc).__name__}: {exc}")
            return
        if not same_bits(pool, before):
            fail(step, "target_verify wrote the pool")
        o, host_buf, starts = o.cpu().double(), buffer.cpu(), cu.tolist()
        for n, s in enumerate(reqs):
            got = o[starts[n]:starts[n + 1]]
            if s < 0:
                if not bool((got == 0).all()):
                    fail(step, f"target_verify: padded request {n}: output rows not zero")
                continue
            ref_o, _, after = m.run_reference([t[starts[n]:starts[n + 1]] for t in toks], live[s], token_states=True)
            if not rel_err(got, ref_o) <= tol:
                fail(step, f"target_verify: request in slot {s}: o rel err {rel_err(got, ref_o):.2e}")
            for t in range(most):
                kept = host_buf[rows[n], t]
                if t < lens[n] and not rel_err(kept, after[t]) <= tol:
                    fail(step, f"target_verify: slot {s} token {t}: buffer state rel err {rel_err(kept, after[t]):.2e}")
                if t >= lens[n] and not bool(kept.isnan().all()):
                    fail(step, f"target_verify: buffer row {rows[n]} step {t} written past the request's tokens")
            accepted = vint(1, lens[n])
            pool[s] = buffer[rows[n], accepted - 1]  # the engine keeps the accepted token's state
            live[s] = after[accepted - 1]
        unused = [r for r in range(N + 1) if r not in rows]
        if unused and not bool(host_buf[unused].isnan().all()):
            fail(step, "target_verify wrote a buffer row no request names")
        if verbose:
            out(f"  before step {step}: target_verify of {reqs} with {lens} draft tokens")

    for step in range(steps):
        if verify and live and float(torch.rand(1, generator=vgen)) < verify:
            verify_round(step)
        free = [s for s in range(slots) if s not in live]
        kind = "extend" if not live or (free and torch.rand(1, generator=gen) < 0.35) else "decode"
        if kind == "extend":
            new = [free[i] for i in torch.randperm(len(free), generator=gen)[:rint(1, min(3, len(free)))].tolist()]
            cont = [s for s in live if torch.rand(1, generator=gen) < 0.3]  # prefill continued in pieces
            for s in new:
                pool[s] = 0.0  # the engine zeroes a newly allocated slot
                live[s] = torch.zeros(m.HV, m.V, m.K, dtype=torch.float64)
            batch = new + cont
            lens = [rint(0, 40) for _ in batch]
        else:
            batch = [s for s in live if torch.rand(1, generator=gen) < 0.8] or [next(iter(live))]
            lens = [1] * len(batch)
        order = torch.randperm(len(batch), generator=gen).tolist()
        batch, lens = [batch[i] for i in order], [lens[i] for i in order]
        for _ in range(rint(0, 2)):  # padded requests
            at = rint(0, len(batch))
            batch.insert(at, -1)
            lens.insert(at, 0 if kind == "extend" else 1)
        T = sum(lens)
        pad_rows = rint(0, 3)
        toks = m.tokens(T, gen)
        given = [torch.cat([t, torch.full((pad_rows, *t.shape[1:]), float("nan"), dtype=t.dtype)]).to(m.dtype)
                 for t in toks]
        extra = rint(0, 2)  # g and beta may carry more rows than q
        given[3] = torch.cat([given[3], torch.full((extra, *given[3].shape[1:]), float("nan"), dtype=m.dtype)])
        given[4] = torch.cat([given[4], torch.full((extra, *given[4].shape[1:]), float("nan"), dtype=m.dtype)])
        given = [t.to(device) for t in given]
        idx = torch.tensor(batch, dtype=torch.int32, device=device)
        cu = torch.tensor([0] + torch.tensor(lens).cumsum(0).tolist(), dtype=torch.int32, device=device)
        try:
            if kind == "extend":
                o = be.extend(*given, ssm_states=pool, cache_indices=idx, query_start_loc=cu, **gate_kw)
            elif pad_rows or rint(0, 1):  # decode with query_start_loc (padding rows past the requests)
                o = be.decode(*given, ssm_states=pool, cache_indices=idx, query_start_loc=cu, **gate_kw)
            else:  # one token per request, batch mode
                o = be.decode(*given, ssm_states=pool, cache_indices=idx, **gate_kw)
        except Exception as exc:  # a valid call must not raise
            fail(step, f"{kind} of {len(batch)} requests raised {type(exc).__name__}: {exc}")
            return failures
        o = o.cpu().double()
        if o.shape[0] > T and not bool((o[T:] == 0).all()):
            fail(step, f"{kind}: output rows of the {o.shape[0] - T} padding tokens not zero")
        starts = cu.tolist()
        for n, s in enumerate(batch):
            rows = o[starts[n]:starts[n + 1]]
            if s < 0:
                if kind == "decode" and rows.numel() and not bool((rows == 0).all()):
                    fail(step, f"decode: padded request {n}: output rows not zero")
                continue
            ref_o, live[s] = m.run_reference([t[starts[n]:starts[n + 1]] for t in toks], live[s])
            if rows.shape[0] and not rel_err(rows, ref_o) <= tol:
                fail(step, f"{kind}: request in slot {s} ({lens[n]} tokens): o rel err {rel_err(rows, ref_o):.2e}")
        host_pool = pool.cpu()
        for s in range(slots):
            if s in live:
                if not rel_err(host_pool[s], live[s]) <= tol:
                    fail(step, f"{kind}: slot {s}: state rel err {rel_err(host_pool[s], live[s]):.2e}")
            elif not bool(host_pool[s].isnan().all()):
                fail(step, f"{kind}: free slot {s} was written")
        for s in [s for s in live if torch.rand(1, generator=gen) < 0.15]:  # finished requests
            del live[s]
            pool[s] = float("nan")
        if verbose:
            out(f"  step {step}: {kind} of {batch} with {lens} tokens (+{pad_rows} padding rows)")
    return failures


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--engines", type=int, default=1, help="engines simulated, seeds seed .. seed + engines - 1")
    ap.add_argument("--tol", type=float, default=3e-3)
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument("--backend", default="triton", choices=["triton", "torch"])
    ap.add_argument("--verify", type=float, default=0.0,
                    help="probability of a speculative round (target_verify, then an accepted state kept) per step")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    failed = 0
    for seed in range(args.seed, args.seed + args.engines):
        failed += simulate(args.steps, seed, device=args.device, backend=args.backend, tol=args.tol,
                           verify=args.verify, out=lambda line: print(line, flush=True), verbose=args.verbose)
    print(f"{args.engines} engines x {args.steps} steps from seed {args.seed}, {args.backend} on {args.device}: "
          f"{failed} failed checks")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
