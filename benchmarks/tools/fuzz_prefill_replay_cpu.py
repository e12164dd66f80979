"""Random sequences of prefill calls against the eager replays, on the CPU (no GPU needed).

For random signatures (varlen or one sequence of fixed length, value heads 1-48 with GVA, head
dims 16-256, pool / dense / no state, either state layout, with or without state snapshots, the
softplus, lower-bound or no gate, dt_bias or not) and random runs of calls (1-9 sequences, 0-9000
tokens each, counts repeated now and then as a model's layers repeat them), the launches are
stubbed (each "launch" records its kernel, compiled-variant key, grid and arguments) and every call
is made twice: by the full path, and by the elastic replay the runner would hold for the call's
form of layout (recorded from the signature's second call on; a declined call's recording learns
the old one's variants and replaces it, as ``runner.remember_eager`` does). A replay must either
decline, launching nothing, or make exactly the full path's launches (o's address aside; scratch
compared by its offset and scratch strides left out, since the full path may serve a call from
buffers grown since the recording). Prints the counts and any mismatch.

    python benchmarks/tools/fuzz_prefill_replay_cpu.py [--signatures 60] [--calls 25] [--seed 0]
"""
import argparse
import os
import random
import sys

import torch

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
import stub_launches  # noqa: E402

from kimiops.kda.kernels import chunk  # noqa: E402
from kimiops.kda.workspace import empty_cache  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--signatures", type=int, default=60)
    p.add_argument("--calls", type=int, default=25)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    rng = random.Random(args.seed)
    calls = []
    stub_launches.install(calls)
    totals = dict(calls=0, replayed=0, declined=0, mismatches=0, forms=set())
    for sig in range(args.signatures):
        empty_cache()
        HV = rng.choice([1, 2, 4, 8, 16, 32, 48])
        H = rng.choice([h for h in (1, 2, 4, 8, 16, 32, 48) if HV % h == 0])
        K = rng.choice([16, 32, 64, 128, 256])
        V = rng.choice([16, 64, 128])
        state = rng.choice(["pool", "dense", "none"])
        track = rng.random() < 0.3
        gate = rng.choice(["softplus", "lower_bound", "none"])
        v_first = rng.random() < 0.7
        dt_bias = torch.zeros(HV * K) if gate != "none" and rng.random() < 0.5 else None
        max_len = rng.choice([300, 3000, 9000])
        fixed = rng.random() < 0.25  # one sequence of fixed length (no cu_seqlens)
        pool = torch.zeros(12, HV, V, K)
        entries, prev = {}, None  # one per form of layout, as the runner keeps them
        for i in range(args.calls):
            if prev is not None and rng.random() < 0.3:
                lens = prev  # a model's next layer: the same counts
            else:
                count = 1 if fixed else rng.randint(1, 9 if max_len < 9000 else 3)
                lens = [rng.randint(0, max_len) for _ in range(count)]
                if sum(lens) == 0:
                    lens[0] = 1
            prev = lens
            N, T = len(lens), sum(lens)
            q, k = (torch.empty(1, T, H, K, dtype=torch.bfloat16) for _ in range(2))
            v = torch.empty(1, T, HV, V, dtype=torch.bfloat16)
            g = torch.empty(1, T, HV, K, dtype=torch.bfloat16)
            beta = torch.empty(1, T, HV, dtype=torch.bfloat16)
            cu = torch.tensor([0, *torch.tensor(lens).cumsum(0).tolist()], dtype=torch.int32)
            idx = torch.arange(N, dtype=torch.int32) if state == "pool" else None
            h0 = pool if state == "pool" else torch.zeros(N, HV, V, K) if state == "dense" else None
            ht = pool if state == "pool" else torch.empty(N, HV, V, K) if state == "dense" else None
            snaps = (torch.empty(N, HV, V, K), torch.zeros(N, dtype=torch.int32)) if track else (None, None)
            cu = None if fixed else cu
            kw = dict(scale=K ** -0.5, cu_seqlens=cu, h0=h0, h0_indices=idx, ht=ht, ht_indices=idx,
                      state_v_first=v_first, use_qk_l2norm=True, use_beta_sigmoid=True, gate=gate,
                      A_log=torch.zeros(HV) if gate == "softplus" else None, dt_bias=dt_bias,
                      lower_bound=-5.0 if gate == "lower_bound" else None, track_state=snaps[0],
                      track_chunk_idx=snaps[1])
            replay_args = (q, k, v, g, beta, h0, idx, ht, idx, cu, kw["A_log"], dt_bias, *snaps)
            calls.clear()
            o_full = chunk.chunk_kda_fwd(q, k, v, g, beta, **kw)
            full = list(calls)
            totals["calls"] += 1
            totals["forms"].add(chunk.elastic_layout(T, N, HV, K, not fixed)[0][0] + (" fixed" if fixed else ""))
            entry = entries.get(chunk.elastic_layout(T, N, HV, K, not fixed)[0])
            if entry is not None:
                calls.clear()
                o = entry(*replay_args)
                if o is None:
                    totals["declined"] += 1
                    if calls:
                        totals["mismatches"] += 1
                        print(f"MISMATCH (declined but launched) sig {sig} HV={HV} K={K} lens={lens}")
                else:
                    totals["replayed"] += 1
                    spans = stub_launches.scratch_spans(entry.scratch)
                    mine = [stub_launches.canonical(c, {"o": o}, spans) for c in calls]
                    theirs = [stub_launches.canonical(c, {"o": o_full}, spans) for c in full]
                    if mine != theirs:
                        totals["mismatches"] += 1
                        print(f"MISMATCH sig {sig} HV={HV} H={H} K={K} V={V} state={state} track={track} "
                              f"lens={lens}: {stub_launches.first_difference(mine, theirs)}")
                    continue
            if i >= 1:  # recorded on the signature's second call, or when the entry declined
                bind = []
                calls.clear()
                chunk.chunk_kda_fwd(q, k, v, g, beta, bind=bind, **kw)
                if bind and bind[1] is not None:
                    if entry is not None:
                        bind[1].learn(entry)
                    entries[bind[1].layout] = bind[1]
    forms = sorted(totals.pop("forms"))
    print(f"signatures {args.signatures}, {totals}, forms seen {forms}")


if __name__ == "__main__":
    main()
