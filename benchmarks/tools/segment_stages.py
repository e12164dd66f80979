"""Where a segmented prefill call's time goes: each kernel of the call (stage 1, the map walk
``SEG = 1``, the start states, the output walk ``SEG = 2``) timed by the PyTorch profiler over
eager calls, mean GPU time per call in us, for forced segment counts.

    PYTHONPATH=$PWD:$PWD/benchmarks python3 benchmarks/tools/segment_stages.py --heads 4 \
        --cases B1_T8192,B4_T4096 --segments 1,8,16
"""
import argparse
from collections import defaultdict

import torch
from torch.profiler import ProfilerActivity, profile

import bench_kda_prefill as bench
from prefill_head_dims import CASES


def kernel_times(fn, calls: int) -> list[tuple[str, float]]:
    """Mean GPU time per call (us) of each kernel launch of ``fn``, in launch order; repeated
    launches of one kernel within a call are told apart by their position (``name#i``)."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
    events = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    events.sort(key=lambda e: e.time_range.start)
    per_call = len(events) // calls
    totals: dict[str, float] = defaultdict(float)
    order = []
    for i, e in enumerate(events[: per_call * calls]):
        pos = i % per_call
        key = f"{pos}:{e.name[:40]}"
        if key not in totals:
            order.append(key)
        totals[key] += e.device_time / calls
    return [(k, totals[k]) for k in order]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--cases", default="B1_T8192")
    p.add_argument("--mode", default="g")
    p.add_argument("--segments", default="1,16", help="forced segment counts (1: none)")
    p.add_argument("--calls", type=int, default=20)
    args = p.parse_args()
    print(f"device {torch.cuda.get_device_name()}, torch {torch.__version__}, H = HV = {args.heads}, "
          f"K = V = {bench.K}", flush=True)
    for name in args.cases.split(","):
        B, T = CASES[name]
        c = bench.make_case(B, T, args.mode, h=args.heads, hv=args.heads)
        ht = torch.empty(B, args.heads, bench.K, bench.V, device="cuda")
        out = torch.empty_like(c["v"])
        for seg in (int(x) for x in args.segments.split(",")):
            fn = bench.ours_fn(c, ht, out, pipeline={"segments": seg})
            times = kernel_times(fn, args.calls)
            total = sum(t for _, t in times)
            cells = ", ".join(f"{k} {t:.1f}" for k, t in times)
            print(f"{name} {args.mode} segments={seg}: sum {total:.1f} us; {cells}", flush=True)


if __name__ == "__main__":
    main()
