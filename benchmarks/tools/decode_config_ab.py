"""A/B of decode kernel configs (``recurrent.TileConfig``) per batch size, for
choosing the tables of ``kimiops.kda.kernels.recurrent._CONFIGS``: CUDA-graph medians (20 chained calls,
as ``benchmarks/bench_kda_decode.py``) of each config, interleaved over --rounds (best round shown), with
% of copy bandwidth. ``--batch`` times batch mode (``[N, 1, ...]`` without cu_seqlens, how
``KDABackend.decode`` launches one token per request) against that form's table; ``--cold`` gives each
of the 20 calls its own pool slots (no state reused from L2 across calls); ``--sorted`` hands each call its
slots in ascending order.

    PYTHONPATH=$PWD python3 benchmarks/tools/decode_config_ab.py --ns 1 2 8 64 128 256 512
    PYTHONPATH=$PWD python3 benchmarks/tools/decode_config_ab.py --batch --cold --ns 2 4 --configs 8x2 8x4e 16x2e
    PYTHONPATH=$PWD python3 benchmarks/tools/decode_config_ab.py --ns 1 2 --configs 8x1 8x1w
"""
import argparse
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import bench_kda_decode as bench  # noqa: E402

from kimiops.bench.timing import copy_bandwidth, graph_us  # noqa: E402
from kimiops.kda.kernels import recurrent as rec  # noqa: E402

CONFIGS = ["8x1", "8x1h", "8x2", "8x2h"]


def parse_config(text: str) -> rec.TileConfig:
    """``"8x1he"`` -> ``TileConfig(8, 1, stream_hints=True, early_inputs=True)``: BV x num_warps,
    suffix ``h`` for the stream hints, ``e`` for the early first-token loads and ``w`` for the PDL
    wait before the release (any order; ``bench_kda_decode.CONFIG_FLAGS``)."""
    letters = "".join(letter for letter, _ in bench.CONFIG_FLAGS)
    head = text.rstrip(letters)
    flags = text[len(head):]
    bv, nw = head.split("x")
    return rec.TileConfig(int(bv), int(nw), **{field: letter in flags for letter, field in bench.CONFIG_FLAGS})


config_name = bench.config_label  # the name parse_config reads back


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--ns", type=int, nargs="*", default=[1, 2, 8, 64, 128, 256, 512])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--configs", nargs="*", default=CONFIGS,
                   help="BVxWARPS, suffix h for the stream hints, e for the early first-token loads")
    p.add_argument("--batch", action="store_true", help="batch mode ([N, 1, ...], no cu_seqlens)")
    p.add_argument("--cold", action="store_true", help="each call of a graph on its own pool slots")
    p.add_argument("--sorted", action="store_true",
                   help="each call's slots in ascending order (as an engine could hand them over)")
    args = p.parse_args()
    gen = torch.Generator(device="cuda").manual_seed(0)
    bw = copy_bandwidth()
    print(f"{torch.cuda.get_device_name()} torch {torch.__version__}; copy bandwidth {bw / 1e12:.3f} TB/s; "
          f"{'batch mode' if args.batch else 'cu_seqlens form'}, {'cold' if args.cold else 'same'} slots"
          f"{', sorted' if args.sorted else ''}", flush=True)
    slots = (bench.GRAPH_CALLS if args.cold else 2) * max(args.ns + [8])
    pool = torch.randn(slots, bench.HV, bench.V, bench.K, device="cuda", generator=gen) * 0.1
    configs = [parse_config(c) for c in args.configs]
    for N in args.ns:
        case = bench.Case(N, pool, gen)
        idx_sets = case.idx_sets if args.cold else [case.idx] * bench.GRAPH_CALLS
        if args.sorted:
            idx_sets = [i.sort().values for i in idx_sets]
        x = (case.q, case.k, case.v, case.g, case.beta)
        if args.batch:
            x = tuple(t.view(N, 1, *t.shape[2:]) for t in x)

        def calls(cfg):
            def one(idx):
                kw = case.launch_kwargs(idx)
                if args.batch:
                    kw["cu_seqlens"] = None
                return lambda: rec.recurrent_kda_fwd_config(cfg.block_v, cfg.num_warps, *x,
                                                            stream_hints=cfg.stream_hints,
                                                            early_inputs=cfg.early_inputs,
                                                            wait_first=cfg.wait_first, **kw)
            return [one(i) for i in idx_sets]

        best: dict = {}
        for _ in range(args.rounds):
            for cfg in configs:
                us = graph_us(calls(cfg))
                best[cfg] = min(best.get(cfg, us), us)
        table = rec.config_for(N * bench.HV, not args.batch)
        cells = [f"{config_name(cfg)}{'*' if cfg == table else ''} {us:.2f} us "
                 f"({100 * case.nbytes() / (us * 1e-6) / bw:.1f}%)" for cfg, us in best.items()]
        print(f"N={N}: " + "; ".join(cells), flush=True)
    print("h: stream hints (evict_first load, .cs store of the state tile); e: the first token's inputs loaded "
          "before the state tile; w: PDL wait before the release of the next grid; *: the table's config")


if __name__ == "__main__":
    main()
