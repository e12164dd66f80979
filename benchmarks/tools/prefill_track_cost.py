"""What state snapshots (``track_state`` / ``track_chunk_idx``) cost a prefill call: the launcher's
call with and without a snapshot of every sequence at its last 64-token boundary before its end
(what a prefix cache asks of an unaligned prompt), CUDA-graph medians in alternating rounds, the
outputs' bits compared, and the snapshot against the final state of the call truncated there.

    PYTHONPATH=$PWD:$PWD/benchmarks python3 benchmarks/tools/prefill_track_cost.py --rep 20
"""
import argparse

import torch

import bench_kda_prefill as bench
from kimiops.kda.kernels import chunk as chunk_mod
from kimiops.testing import rel_err

# name: (heads, B, T, varlen lengths or None)
CASES = {
    "H32_B1_T8192": (32, 1, 8192, None),
    "H32_B8_T1024": (32, 8, 1024, None),
    "H32_varlen7": (32, 1, sum(bench.VARLEN_LENS), bench.VARLEN_LENS),
    "H4_B1_T8192": (4, 1, 8192, None),
}


def call(c, ht, out, track=None, idx=None):
    """The library's launcher on case ``c`` (precomputed g or the in-kernel gate)."""
    return chunk_mod.chunk_kda_fwd(
        c["q"], c["k"], c["v"], c["g"], c["beta"], scale=bench.K**-0.5, cu_seqlens=c["cu"], h0=None, h0_indices=None,
        ht=ht, ht_indices=None, state_v_first=False, use_qk_l2norm=True, use_beta_sigmoid=False,
        gate="none" if c["mode"] == "g" else "softplus", A_log=c["A_log"], dt_bias=c["dt_bias"], lower_bound=None,
        out=out, track_state=track, track_chunk_idx=idx)


def truncated_final_state(c, lens, idx):
    """Final states of the same call on each sequence's first ``64 * idx[n]`` tokens."""
    keep = [64 * j for j in idx.tolist()]
    starts = [sum(lens[:n]) for n in range(len(lens))]
    rows = torch.cat([torch.arange(s, s + m) for s, m in zip(starts, keep)]).cuda()
    flat = {n: (c[n].flatten(0, 1)[rows].unsqueeze(0) if n in ("q", "k", "v", "g", "beta") else c[n]) for n in c}
    flat["cu"] = torch.tensor([0] + keep, device="cuda").cumsum(0).to(torch.int32)
    ht = torch.empty(len(lens), *c["ht_shape"], device="cuda")
    call(flat, ht, torch.empty_like(flat["v"]))
    return ht


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--cases", default=",".join(CASES))
    p.add_argument("--modes", default="g")
    p.add_argument("--rep", type=int, default=20)
    p.add_argument("--rounds", type=int, default=2)
    args = p.parse_args()
    print(f"device {torch.cuda.get_device_name()}, torch {torch.__version__}, K = V = {bench.K}", flush=True)
    for name in args.cases.split(","):
        heads, B, T, lens = CASES[name]
        seq_lens = lens if lens else [T] * B
        for mode in args.modes.split(","):
            c = bench.make_case(B, T, mode, lens=lens, h=heads, hv=heads)
            c["ht_shape"] = (heads, bench.K, bench.V)
            N = len(seq_lens)
            idx = torch.tensor([(n - 1) // 64 for n in seq_lens], dtype=torch.int32, device="cuda")
            ht = torch.empty(N, *c["ht_shape"], device="cuda")
            out_plain, out_track = torch.empty_like(c["v"]), torch.empty_like(c["v"])
            track = torch.full((N, *c["ht_shape"]), float("nan"), device="cuda")
            plain = lambda: call(c, ht, out_plain)  # noqa: E731
            tracked = lambda: call(c, ht, out_track, track, idx)  # noqa: E731
            plain()
            tracked()
            torch.cuda.synchronize()
            same_o = torch.equal(out_plain, out_track)
            if lens is None:  # the fixed-length truncated call is a varlen call of the same sequences
                flat_c = dict(c, cu=torch.tensor([0] + [T] * B, device="cuda").cumsum(0).to(torch.int32))
                for n in ("q", "k", "v", "g", "beta"):
                    flat_c[n] = c[n].flatten(0, 1).unsqueeze(0)
                ref = truncated_final_state(flat_c, seq_lens, idx)
            else:
                ref = truncated_final_state(c, seq_lens, idx)
            exact = torch.equal(track, ref)
            times = {"plain": [], "tracked": []}
            for _ in range(args.rounds):
                times["plain"].append(bench.bench_graph(plain, args.rep))
                times["tracked"].append(bench.bench_graph(tracked, args.rep))
            tp, tt = (min(times[k]) for k in ("plain", "tracked"))
            print(f"{name} {mode}: plain {' / '.join(f'{t:.4f}' for t in times['plain'])} ms, tracked "
                  f"{' / '.join(f'{t:.4f}' for t in times['tracked'])} ms (best {tt / tp:.3f}x); o bits equal "
                  f"{same_o}; snapshot vs truncated call: bits equal {exact}, rel {rel_err(track, ref):.2e}",
                  flush=True)


if __name__ == "__main__":
    main()
