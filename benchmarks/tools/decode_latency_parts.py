"""Where a small decode call's time goes: CUDA-graph medians of the decode kernel with parts of its
per-token work switched off through the API's own flags (q/k L2 norm, beta sigmoid, the softplus
gate, reading the pool), next to the full call. Same cases as ``benchmarks/bench_kda_decode.py``.

    PYTHONPATH=$PWD python3 benchmarks/tools/decode_latency_parts.py --ns 1 2 8
"""
import argparse
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import bench_kda_decode as bench  # noqa: E402

from kimiops.bench.timing import best_graph_us  # noqa: E402
from kimiops.kda.kernels import recurrent as rec  # noqa: E402

# name -> overrides of the bench case's keyword arguments
VARIANTS = {
    "full": {},
    "no l2norm": {"use_qk_l2norm": False},
    "no sigmoid": {"use_beta_sigmoid": False},
    "no gate (g is the log decay)": {"gate": "none"},
    "no l2norm/sigmoid/gate": {"use_qk_l2norm": False, "use_beta_sigmoid": False, "gate": "none"},
    "no pool read (h0 None)": {"h0": None, "h0_indices": None},
    "no pool read or write": {"h0": None, "h0_indices": None, "ht": None, "ht_indices": None},
}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--ns", type=int, nargs="*", default=[1, 2, 8])
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args()
    gen = torch.Generator(device="cuda").manual_seed(0)
    print(f"{torch.cuda.get_device_name()} torch {torch.__version__}", flush=True)
    pool = torch.randn(2 * max(args.ns + [8]), bench.HV, bench.V, bench.K, device="cuda", generator=gen) * 0.1
    for N in args.ns:
        case = bench.Case(N, pool, gen)
        base = case.launch_kwargs()
        fns = {name: (lambda kw=dict(base, **over): rec.recurrent_kda_fwd(
            case.q, case.k, case.v, case.g, case.beta, **kw)) for name, over in VARIANTS.items()}
        best = best_graph_us(fns, bench.GRAPH_CALLS, args.rounds)
        print(f"N={N}: " + "; ".join(f"{n} {us:.2f} us" for n, us in best.items()), flush=True)


if __name__ == "__main__":
    main()
