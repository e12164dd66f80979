"""What zeroing the padding rows costs: varlen prefill calls with ``zero_padding_rows`` off and on.

``KDABackend.extend`` (and the vLLM adapter) pass ``zero_padding_rows=True`` to ``chunk_kda_fwd`` since the
fifty-eighth session, so the programs that end the last sequence store zeros to the token rows past
``cu_seqlens[N]``; the public ``chunk_kda`` compiles as before. This times the varlen call both ways on the same
inputs (CUDA-graph medians, the flag's two settings alternated over ``--rounds`` rounds, H = HV = 32 unless the
case says otherwise, K = V = 128, q/k L2 norm), for the issue's varlen cell (no padding rows: the cost of the
recompiled state stage alone) and for serving-like batches with padding rows (rows rounded up to a multiple of
256, as a graph's bucket): several short requests (one part), one long prompt (pipelined parts) and one long
prompt at 4 heads (segments, a tensor-parallel rank). Prints per case and gate mode the medians of each setting,
their ratio, and whether the padding rows came out zero with the flag.

    PYTHONPATH=$PWD:$PWD/benchmarks:<fla site> python3 benchmarks/tools/zero_padding_rows_ab.py [--rounds 3]
        [--modes g,gate] [--cases ...]   # repository root; another tree first on PYTHONPATH times that tree
"""
import argparse
import os
import statistics

import torch

import bench_kda_prefill as bk
import kimiops

REP = 40  # ms of replays per median
# name: (heads, lengths of the requests, token rows of the call)
CASES = {
    "varlen7_16384": (32, bk.VARLEN_LENS, sum(bk.VARLEN_LENS)),
    "8x100-400_pad": (32, [100, 400, 250, 320, 130, 390, 210, 177], 2048),
    "64x128_pad": (32, [128] * 64, 8448),
    "1x3000_pad": (32, [3000], 3072),
    "1x8000_h4_pad": (4, [8000], 8192),
    # one prompt without padding rows, for the recompiled walk's cost alone (not run by default)
    "1x8192": (32, [8192], 8192),
    "1x32768": (32, [32768], 32768),
}
DEFAULT_CASES = "varlen7_16384,8x100-400_pad,64x128_pad,1x3000_pad,1x8000_h4_pad"
ARGS = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
ARGS.add_argument("--rounds", type=int, default=3)
ARGS.add_argument("--modes", default="g,gate")
ARGS.add_argument("--cases", default=DEFAULT_CASES, help=f"of {', '.join(CASES)}")


def main():
    args = ARGS.parse_args()
    print(f"kimiops from {os.path.dirname(kimiops.__file__)}; device {torch.cuda.get_device_name()}; "
          f"medians of CUDA-graph replays, {args.rounds} rounds alternated")
    for name in args.cases.split(","):
        heads, lens, rows = CASES[name]
        for mode in args.modes.split(","):
            c = bk.make_case(1, rows, mode, lens=lens, h=heads, hv=heads)
            ht = torch.empty(len(lens), heads, bk.K, bk.V, device="cuda")
            out = torch.full_like(c["v"], float("nan"))
            fns = {flag: bk.ours_fn(c, ht, out, zero_padding_rows=flag) for flag in (False, True)}
            fns[True]()
            torch.cuda.synchronize()
            pad_zero = bool((out[0, sum(lens):] == 0).all()) if rows > sum(lens) else None
            times = {False: [], True: []}
            for _ in range(args.rounds):
                for flag in (False, True):
                    times[flag].append(bk.bench_graph(fns[flag], REP) * 1e3)
            off, on = statistics.median(times[False]), statistics.median(times[True])
            print(f"{name} {mode}: off {off:.1f} us, on {on:.1f} us, on/off {on / off:.4f} "
                  f"(rounds off {', '.join(f'{t:.1f}' for t in times[False])}; "
                  f"on {', '.join(f'{t:.1f}' for t in times[True])}); padding rows zero with the flag: {pad_zero}")
            del c, ht, out, fns


if __name__ == "__main__":
    main()
