"""Random runs of public ``kimiops.chunk_kda`` calls through the eager shortcut, on the CPU (no GPU
needed): the whole host path (``runner.eager_call``'s keys, guards and consistency checks, exact and
elastic entries, their recording, declining, learning and replacing) against the full path.

The launches are stubbed (``stub_launches``) and the shortcut is let take CPU tensors
(``runner.on_gpu``). Each call is made twice on the same tensors: as a caller makes it, and with
``KIMIOPS_DEBUG=1`` (which never takes the shortcut); both must make the same launches (o and a
dense final state by label, scratch by offset, scratch strides left out). Signatures are drawn at
random: varlen or fixed length (one sequence or a batch of two, call by call); 1-48 value heads with GVA;
head dims 16-256; a pool with indices, a dense initial state or none, final states or not; state
snapshots or not; every gate mode; and runs of calls with random lengths, some repeating the
previous call's shapes as a model's layers do, some changing one tensor's layout (a strided q, an
unaligned q, a q whose batch rows are not dense) to see that the guards send them elsewhere.

    python benchmarks/tools/fuzz_eager_prefill_cpu.py [--signatures 200] [--calls 20] [--seed 0]
"""
import argparse
import os
import random
import sys

import torch

os.environ.setdefault("TRITON_INTERPRET", "1")  # backend="triton" on CPU tensors (nothing runs: launches are stubbed)
sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
import stub_launches  # noqa: E402

import kimiops  # noqa: E402
from kimiops.kda import runner  # noqa: E402
from kimiops.kda.workspace import empty_cache  # noqa: E402

HEADS = (1, 2, 4, 8, 16, 32, 48)


def _signature(rng):
    HV = rng.choice(HEADS)
    return dict(HV=HV, H=rng.choice([h for h in HEADS if HV % h == 0]), K=rng.choice([16, 32, 64, 128, 256]),
                V=rng.choice([16, 64, 128]), mode=rng.choice(["varlen", "fixed"]),
                state=rng.choice(["pool", "dense", "none"]), final=rng.random() < 0.5, track=rng.random() < 0.3,
                gate=rng.choice(["softplus", "lower_bound", "none"]), dt=rng.random() < 0.5,
                v_first=rng.random() < 0.7, max_len=rng.choice([100, 1500, 6000]))


def _call_args(sig, lens, rng, odd=None):
    """Arguments of one ``chunk_kda`` call of sequences ``lens`` (``odd``: a "strided", "unaligned"
    or "batch_sliced" q)."""
    HV, H, K, V = sig["HV"], sig["H"], sig["K"], sig["V"]
    varlen = sig["mode"] == "varlen"
    B, T = (1, sum(lens)) if varlen else (len(lens), lens[0])
    N = len(lens)
    q = torch.empty(B, T, H, K, dtype=torch.bfloat16)
    if odd == "strided":
        q = torch.empty(B, T, H, 2 * K, dtype=torch.bfloat16)[..., :K]
    elif odd == "unaligned":
        q = torch.empty(B * T * H * K + 1, dtype=torch.bfloat16)[1:].view(B, T, H, K)
    elif odd == "batch_sliced":  # rows dense within a sequence, not across the batch
        q = torch.empty(B, T + 8, H, K, dtype=torch.bfloat16)[:, :T]
    k = torch.empty(B, T, H, K, dtype=torch.bfloat16)
    v = torch.empty(B, T, HV, V, dtype=torch.bfloat16)
    g = torch.empty(B, T, HV, K, dtype=torch.bfloat16)
    beta = torch.empty(B, T, HV, dtype=torch.bfloat16)
    shape = (HV, V, K) if sig["v_first"] else (HV, K, V)
    kw = dict(use_qk_l2norm_in_kernel=True, use_beta_sigmoid_in_kernel=True, state_v_first=sig["v_first"],
              output_final_state=sig["final"], backend="triton")
    if varlen:
        kw["cu_seqlens"] = torch.tensor([0, *torch.tensor(lens).cumsum(0).tolist()], dtype=torch.int32)
    if sig["state"] == "pool":
        kw["initial_state"] = sig.setdefault("pool", torch.zeros(12, *shape))
        kw["initial_state_indices"] = torch.tensor(rng.sample(range(12), N), dtype=torch.int32)
    elif sig["state"] == "dense":
        kw["initial_state"] = torch.zeros(N, *shape)
    if sig["gate"] != "none":
        kw["use_gate_in_kernel"] = True
        kw["A_log"] = torch.zeros(HV) if sig["gate"] == "softplus" or rng.random() < 0.5 else None
        kw["lower_bound"] = -5.0 if sig["gate"] == "lower_bound" else None
        kw["dt_bias"] = torch.zeros(HV * K) if sig["dt"] else None
    if sig["track"]:
        kw["track_state"] = torch.empty(N, *shape)
        kw["track_chunk_idx"] = torch.tensor([rng.choice([-1, 0, n // 64]) for n in lens], dtype=torch.int32)
    return (q, k, v, g, beta), kw


def fuzz(signatures: int, calls_per: int, seed: int, setattr_=setattr, out=print) -> dict:
    """Run the fuzz; returns the counts (``mismatches`` must be 0)."""
    rng = random.Random(seed)
    launches = []
    stub_launches.install(launches, setattr_)
    setattr_(runner, "on_gpu", lambda q: isinstance(q, torch.Tensor))
    counts = dict(calls=0, shortcut=0, mismatches=0)
    replays = {"exact": 0, "elastic": 0}
    bound_call, elastic_call = kimiops.kda.kernels.chunk.BoundPrefill.__call__, \
        kimiops.kda.kernels.chunk.ElasticPrefill.__call__

    def counted(kind, fn):
        def call(self, *a):
            res = fn(self, *a)
            replays[kind] += res is not None
            return res
        return call

    setattr_(kimiops.kda.kernels.chunk.BoundPrefill, "__call__", counted("exact", bound_call))
    setattr_(kimiops.kda.kernels.chunk.ElasticPrefill, "__call__", counted("elastic", elastic_call))
    previous_debug = os.environ.pop("KIMIOPS_DEBUG", None)
    try:
        for s in range(signatures):
            empty_cache()
            runner.forget_eager()
            sig = _signature(rng)
            prev = None
            for _ in range(calls_per):
                if prev is not None and rng.random() < 0.35:
                    lens = prev
                else:
                    n = rng.choice([1, 1, 2]) if sig["mode"] == "fixed" else rng.randint(1, 6)
                    length = rng.randint(1, sig["max_len"])
                    lens = [length] * n if sig["mode"] != "varlen" else \
                        [rng.randint(0, sig["max_len"]) for _ in range(n)]
                    lens[0] = max(lens[0], 1)
                prev = lens
                odd = rng.choice([None] * 8 + ["strided", "unaligned", "batch_sliced"])
                x, kw = _call_args(sig, lens, rng, odd)
                before = sum(replays.values())
                launches.clear()
                o, ht = kimiops.chunk_kda(*x, **kw)
                fast = list(launches)
                shortcut = sum(replays.values()) > before
                os.environ["KIMIOPS_DEBUG"] = "1"
                launches.clear()
                o_full, ht_full = kimiops.chunk_kda(*x, **kw)
                del os.environ["KIMIOPS_DEBUG"]
                full = list(launches)
                counts["calls"] += 1
                counts["shortcut"] += shortcut
                spans = stub_launches.scratch_spans()
                for e in list(runner._elastic.values()) + list(runner._eager.values()):
                    for entry in e:
                        spans += stub_launches.scratch_spans(entry.launch.scratch)
                dense_ht = ht if sig["state"] != "pool" else None
                inputs = dict(zip("qkvgb", x), **{n: t for n, t in kw.items() if isinstance(t, torch.Tensor)})
                mine = [stub_launches.canonical(c, dict(inputs, o=o, ht=dense_ht), spans, True) for c in fast]
                theirs = [stub_launches.canonical(c, dict(inputs, o=o_full, ht=ht_full if dense_ht is not None else None),
                                                  spans, True) for c in full]
                if mine != theirs:
                    counts["mismatches"] += 1
                    out(f"MISMATCH signature {s} {dict((k, v) for k, v in sig.items() if k != 'pool')} lens={lens} "
                        f"odd={odd} shortcut={shortcut}: {stub_launches.first_difference(mine, theirs)}")
    finally:
        os.environ.pop("KIMIOPS_DEBUG", None)
        if previous_debug is not None:
            os.environ["KIMIOPS_DEBUG"] = previous_debug
        runner.forget_eager()
    counts.update(replays)
    return counts


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--signatures", type=int, default=200)
    p.add_argument("--calls", type=int, default=20)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    print(f"signatures {args.signatures}, calls each {args.calls}: {fuzz(args.signatures, args.calls, args.seed)}")


if __name__ == "__main__":
    main()
