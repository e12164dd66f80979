"""Measurement primitives shared by the benchmarks: the machine's two ceilings and timers.

Timers return microseconds. CUDA-graph timings capture the callables back to back in one graph
and divide a replay's time by their number (host launch overhead removed).
"""

from __future__ import annotations

import statistics
import time
from typing import NamedTuple

import torch


def _do_bench(fn, warmup_ms: int = 10, rep_ms: int = 50) -> float:
    from triton.testing import do_bench

    return do_bench(fn, warmup=warmup_ms, rep=rep_ms, return_mode="median") * 1e3


def copy_bandwidth(nbytes: int = 2**30) -> float:
    """Bytes/s of a device-to-device copy of ``nbytes``, counting bytes read plus written."""
    src = torch.empty(nbytes, dtype=torch.uint8, device="cuda").random_()
    dst = torch.empty_like(src)
    us = _do_bench(lambda: dst.copy_(src), rep_ms=100)
    return 2 * nbytes / (us * 1e-6)


def matmul_rate(n: int = 8192) -> float:
    """bf16 FLOP/s of an ``n x n x n`` product on random data (cuBLAS through torch)."""
    a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    us = _do_bench(lambda: a @ b, rep_ms=200)
    return 2 * n**3 / (us * 1e-6)


def graph_us(fns, reps: int = 30) -> float:
    """Median per-call time of the callables ``fns`` captured back to back in one CUDA graph."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up (compilation, allocator) outside the capture
        for fn in fns[:2]:
            fn()
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for fn in fns:
            fn()
    graph.replay()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(reps):
        start.record()
        graph.replay()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1e3 / len(fns))
    del graph
    return statistics.median(times)


def best_graph_us(fns: dict, calls: int, rounds: int) -> dict:
    """Per name of ``fns`` (name -> callable), the lowest over ``rounds`` of :func:`graph_us` of
    ``calls`` chained calls; the rounds interleave the names, so drift hits all of them alike."""
    best: dict = {}
    for _ in range(rounds):
        for name, fn in fns.items():
            us = graph_us([fn] * calls)
            best[name] = min(best.get(name, us), us)
    return best


def loop_us(fn, n: int = 2000, rounds: int = 5, sync=None, warmup: int = 1) -> float:
    """Time of one call of ``fn`` (us) back to back: the median over ``rounds`` of the mean of ``n``
    calls, after ``warmup`` calls. For host-only pieces (keys, lookups, allocations); with ``sync``
    (e.g. ``torch.cuda.synchronize``, called after the warm-up and inside each round's timing), the
    per-call pace of calls that launch work. One call after an idle GPU is :func:`host_us`."""
    for _ in range(warmup):
        fn()
    if sync is not None:
        sync()
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        if sync is not None:
            sync()
        times.append((time.perf_counter() - t0) / n * 1e6)
    return statistics.median(times)


def host_us(fn, iters: int = 200) -> tuple[float, float]:
    """Median host times of one call: (until the GPU finished, until the call returned)."""
    fn()
    torch.cuda.synchronize()
    walls, launches = [], []
    for _ in range(iters):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        fn()
        t1 = time.perf_counter()
        torch.cuda.synchronize()
        walls.append(time.perf_counter() - t0)
        launches.append(t1 - t0)
    return statistics.median(walls) * 1e6, statistics.median(launches) * 1e6


class CallTimes(NamedTuple):
    """Host times of a sequence of calls (us), from :func:`each_call_us`."""

    until: float       # median time until a call returned, each after an idle GPU
    until_mean: float  # the mean of the same (counts rare slow calls, e.g. those that record)
    pace: float        # per call, all of them enqueued back to back without synchronizing
    wall: float        # median time until the GPU finished a lone call


def each_call_us(fns) -> CallTimes:
    """:class:`CallTimes` of calling each of ``fns`` once in order (calls whose inputs differ, as a
    serving loop makes them), then all of them back to back."""
    until, wall = [], []
    for fn in fns:
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        fn()
        until.append(time.perf_counter() - t0)
        torch.cuda.synchronize()
        wall.append(time.perf_counter() - t0)
    t0 = time.perf_counter()
    for fn in fns:
        fn()
    torch.cuda.synchronize()
    pace = (time.perf_counter() - t0) / len(fns)
    return CallTimes(statistics.median(until) * 1e6, statistics.mean(until) * 1e6, pace * 1e6,
                     statistics.median(wall) * 1e6)


def queued_gpu_us(fns) -> float:
    """Median GPU time of one call of each of ``fns`` (us): CUDA events around the call, whose
    launches are queued behind a ~2 ms sleep kernel so that the host is not on the clock."""
    out = []
    for fn in fns:
        torch.cuda.synchronize()
        torch.cuda._sleep(4_000_000)
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        out.append(start.elapsed_time(end) * 1e3)
    return statistics.median(out)


def environment() -> dict:
    """Device, versions and date for a results file."""
    import datetime
    import platform

    import triton

    info = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "triton": triton.__version__,
    }
    if torch.cuda.is_available():
        props = torch.cuda.get_device_properties(0)
        info.update(device=props.name, capability=f"{props.major}.{props.minor}", sms=props.multi_processor_count)
    try:
        import fla

        info["fla"] = getattr(fla, "__version__", "unknown")
    except ImportError:
        info["fla"] = None
    return info
