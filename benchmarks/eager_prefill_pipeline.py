"""Eager calls of the pipelined prefill: is the chained schedule host-bound?

For single long prompts (B1 T8192 and T32768, H = HV = 32, K = V = 128, bf16) the call runs in
pipelined parts, either chained on one stream by programmatic dependent launch or with the state
stage on a forked high-priority stream (``PIPELINE_CONFIG["pdl"]``, kimiops/kda/kernels/chunk.py).
In eager mode the host enqueues every launch while the GPU runs, so a call whose host time exceeds
its GPU time is timed at the host's pace. This script alternates the schedules (and one part) for
``--trials`` rounds and prints for each:

* ``eager``: ``triton.testing.do_bench`` median (ms; L2 flushed before each call), as the
  benchmark's eager column;
* ``host``: host time to enqueue one call (ms; 50 calls back to back without synchronizing,
  divided by 50);
* ``graph``: CUDA-graph replay median (ms), once per schedule.

    PYTHONPATH=$PWD python benchmarks/eager_prefill_pipeline.py [--trials 3] [--rep 20]
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_kda_prefill import HV, K, V, bench_eager, bench_graph, make_case, ours_fn  # noqa: E402

SCHEDULES = [("pdl chain", {"pdl": True}), ("forked stream", {"pdl": False}), ("1 part", {"max_parts": 1})]


def host_ms(fn, calls=50):
    """Host time per call of ``calls`` calls enqueued back to back (ms): the pace at which eager
    calls can be issued, the quantity that decides whether they are host-bound. (Not
    ``kimiops.bench.timing.host_us``, which times one call after the GPU went idle.)"""
    fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    t1 = time.perf_counter()
    torch.cuda.synchronize()
    return (t1 - t0) * 1e3 / calls


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--rep", type=int, default=20)
    args = ap.parse_args()
    print(f"device {torch.cuda.get_device_name()}, torch {torch.__version__}")
    for name, T, mode in (("B1_T8192", 8192, "g"), ("B1_T8192", 8192, "gate"), ("B1_T32768", 32768, "g")):
        c = make_case(1, T, mode)
        ht = torch.empty(1, HV, K, V, device="cuda")
        out = torch.empty_like(c["v"])
        fns = {label: ours_fn(c, ht, out, pipeline=pipe) for label, pipe in SCHEDULES}
        graph = {label: bench_graph(fn, args.rep) for label, fn in fns.items()}
        for trial in range(args.trials):
            for label, fn in fns.items():
                e = bench_eager(fn, args.rep)
                h = host_ms(fn)
                print(f"  {name}_{mode} trial {trial} {label:<14} eager {e:7.3f} ms  host {h:7.3f} ms  "
                      f"graph {graph[label]:7.3f} ms", flush=True)
        del c, ht, out, fns


if __name__ == "__main__":
    main()
