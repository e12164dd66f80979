"""A/B of decode kernel configs ``(BV, num_warps, stream_hints)`` per batch size, for choosing
``kimiops.kda.kernels.recurrent._CONFIGS``: CUDA-graph medians (20 chained calls, as
``benchmarks/bench_kda_decode.py``) of each config, interleaved over --rounds (best round shown),
with % of copy bandwidth.

    PYTHONPATH=$PWD python3 benchmarks/tools/decode_config_ab.py --ns 1 2 8 64 128 256 512
"""
import argparse
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import bench_kda_decode as bench  # noqa: E402

from kimiops.bench.timing import best_graph_us, copy_bandwidth  # noqa: E402
from kimiops.kda.kernels import recurrent as rec  # noqa: E402

CONFIGS = ["8x1", "8x1h", "8x2", "8x2h"]


def parse_config(text: str) -> tuple[int, int, bool]:
    """``"8x1h"`` -> ``(8, 1, True)``: BV x num_warps, ``h`` for the stream hints."""
    hints = text.endswith("h")
    bv, nw = text.rstrip("h").split("x")
    return int(bv), int(nw), hints


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--ns", type=int, nargs="*", default=[1, 2, 8, 64, 128, 256, 512])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--configs", nargs="*", default=CONFIGS, help="BVxWARPS, suffix h for the stream hints")
    args = p.parse_args()
    gen = torch.Generator(device="cuda").manual_seed(0)
    bw = copy_bandwidth()
    print(f"{torch.cuda.get_device_name()} torch {torch.__version__}; copy bandwidth {bw / 1e12:.3f} TB/s", flush=True)
    pool = torch.randn(2 * max(args.ns + [8]), bench.HV, bench.V, bench.K, device="cuda", generator=gen) * 0.1
    for N in args.ns:
        case = bench.Case(N, pool, gen)
        kw = case.launch_kwargs()
        fns = {(bv, nw, hints): (lambda bv=bv, nw=nw, hints=hints: rec.recurrent_kda_fwd_config(
            bv, nw, case.q, case.k, case.v, case.g, case.beta, stream_hints=hints, **kw))
            for bv, nw, hints in map(parse_config, args.configs)}
        best = best_graph_us(fns, bench.GRAPH_CALLS, args.rounds)
        table = rec.config_for(N * bench.HV, True)
        cells = [f"{bv}x{nw}{'h' if h else ''}{'*' if (bv, nw, h) == table else ''} {us:.2f} us "
                 f"({100 * case.nbytes() / (us * 1e-6) / bw:.1f}%)" for (bv, nw, h), us in best.items()]
        print(f"N={N}: " + "; ".join(cells), flush=True)
    print("h: stream hints (evict_first load, .cs store of the state tile); *: the table's config")


if __name__ == "__main__":
    main()
