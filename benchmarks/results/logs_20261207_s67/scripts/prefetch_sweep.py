"""Sixty-seventh session: A/B of decode_prefetch_first.patch (apply it first). For each form (cu_seqlens,
batch mode), slots (same for the 20 calls of a graph, or cold: each call its own) and N, the table's config
against it with the prefetch flag at several programs-per-SM counts (``rec._PREFETCH_PER_SM``, read when a
call is captured); CUDA-graph medians, rounds interleaved, best and median of the rounds, % of copy
bandwidth as bench_kda_decode.py counts it.

    PYTHONPATH=$PWD:$PWD/benchmarks python3 prefetch_sweep.py --ns 16 32 64 128 --per-sm 16 20 32
"""
import argparse
import statistics

import torch

import bench_kda_decode as bench
from kimiops.bench.timing import copy_bandwidth, graph_us
from kimiops.kda.kernels import recurrent as rec


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--ns", type=int, nargs="*", default=[16, 32, 64, 128])
    p.add_argument("--per-sm", type=int, nargs="*", default=[16, 20, 32])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--cold", action="store_true")
    args = p.parse_args()
    bw = copy_bandwidth()
    print(f"{torch.cuda.get_device_name()}; copy bandwidth {bw / 1e12:.3f} TB/s; {'cold' if args.cold else 'same'} slots",
          flush=True)
    gen = torch.Generator(device="cuda").manual_seed(0)
    slots = (bench.GRAPH_CALLS if args.cold else 2) * max(args.ns + [8])
    pool = torch.randn(slots, bench.HV, bench.V, bench.K, device="cuda", generator=gen) * 0.1
    for batch in (False, True):
        for N in args.ns:
            case = bench.Case(N, pool, gen)
            idx_sets = case.idx_sets if args.cold else [case.idx] * bench.GRAPH_CALLS
            x = (case.q, case.k, case.v, case.g, case.beta)
            if batch:
                x = tuple(t.view(N, 1, *t.shape[2:]) for t in x)
            table = rec.config_for(N * bench.HV, not batch)
            variants = [("table " + bench.config_label(table), table, 0)]
            variants += [(f"+p {k}/SM", table._replace(prefetch_first=True), k) for k in args.per_sm]

            def calls(cfg):
                def one(idx):
                    kw = case.launch_kwargs(idx)
                    if batch:
                        kw["cu_seqlens"] = None
                    return lambda: rec.recurrent_kda_fwd_config(
                        cfg.block_v, cfg.num_warps, *x, stream_hints=cfg.stream_hints, early_inputs=cfg.early_inputs,
                        wait_first=cfg.wait_first, prefetch_first=cfg.prefetch_first, **kw)
                return [one(i) for i in idx_sets]

            res = {name: [] for name, _, _ in variants}
            for _ in range(args.rounds):
                for name, cfg, per_sm in variants:
                    rec._PREFETCH_PER_SM = per_sm or 32
                    res[name].append(graph_us(calls(cfg)))
            cells = [f"{name} {statistics.median(v):.2f} / {min(v):.2f} us "
                     f"({100 * case.nbytes() / (statistics.median(v) * 1e-6) / bw:.1f}%)" for name, v in res.items()]
            print(f"{'batch' if batch else 'cu_seqlens'} N={N}: " + "; ".join(cells), flush=True)
    print("median / best of the rounds; % of copy bandwidth from the median")


if __name__ == "__main__":
    main()
