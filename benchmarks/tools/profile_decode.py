"""A few decode calls (the cases of ``benchmarks/bench_kda_decode.py``) for Nsight Compute:

    ncu -k regex:recurrent -s 4 -c 1 --set full --cache-control none --import-source yes \
        python3 benchmarks/tools/profile_decode.py --n 1

``--cache-control none`` keeps the pool slots in L2 between calls, as in back-to-back decode steps.
"""
import argparse
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import bench_kda_decode as bench  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--n", type=int, default=1, help="requests (one token each)")
    p.add_argument("--calls", type=int, default=6)
    args = p.parse_args()
    gen = torch.Generator(device="cuda").manual_seed(0)
    pool = torch.randn(2 * max(args.n, 8), bench.HV, bench.V, bench.K, device="cuda", generator=gen) * 0.1
    case = bench.Case(args.n, pool, gen)
    fn = case.ours()
    for _ in range(args.calls):
        fn()
    torch.cuda.synchronize()


if __name__ == "__main__":
    main()
