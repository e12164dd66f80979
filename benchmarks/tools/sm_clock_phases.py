"""SM clock and board power while the prefill stages replay back to back (``nvidia-smi`` sampled
every 20 ms), to tell whether a stage runs at a lower clock inside the whole call than alone.

Phases of ``--seconds`` each (CUDA-graph replays back to back, B1, H = HV = 32, K = V = 128):
idle, stage 1 alone, the state stage alone (one launch over all chunks), the whole call (its
default pipelined parts). Per phase: replays per second, time per replay, and the median / min /
max of the SM clock and the median power over the samples after the first 0.3 s.

    PYTHONPATH=$PWD:$PWD/benchmarks python3 benchmarks/tools/sm_clock_phases.py --cases B1_T8192
"""
import argparse
import statistics
import subprocess
import threading
import time

import torch

from bench_kda_prefill import _capture, ours_fn, warm_case
from kimiops.kda import workspace

CASES = {"B1_T8192": (1, 8192), "B1_T32768": (1, 32768), "B8_T1024": (8, 1024)}


class Sampler:
    """``nvidia-smi`` samples ``(host time, SM MHz, watts)`` in a background thread."""

    def __init__(self, period_ms: int = 20):
        self.samples = []
        self.proc = subprocess.Popen(
            ["nvidia-smi", "--query-gpu=clocks.sm,power.draw", "--format=csv,noheader,nounits", f"-lms={period_ms}"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        for line in self.proc.stdout:
            parts = [x.strip() for x in line.split(",")]
            try:
                self.samples.append((time.time(), float(parts[0]), float(parts[1])))
            except (ValueError, IndexError):
                self.samples.append((time.time(), float("nan"), float("nan")))

    def window(self, t0: float, t1: float):
        return [(mhz, w) for t, mhz, w in self.samples if t0 <= t <= t1]

    def stop(self):
        self.proc.terminate()


def run_phase(name, fn, seconds, sampler):
    torch.cuda.synchronize()
    t0 = time.time()
    n = 0
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    while time.time() - t0 < seconds:
        if fn is None:
            time.sleep(0.05)
        else:
            for _ in range(20):
                fn()
            n += 20
            torch.cuda.synchronize()
    end.record()
    torch.cuda.synchronize()
    t1 = time.time()
    per = start.elapsed_time(end) / n if n else float("nan")
    w = sampler.window(t0 + 0.3, t1)
    mhz = [x for x, _ in w if x == x]
    watts = [y for _, y in w if y == y]
    if mhz:
        print(f"{name:<28} {n:6d} replays, {per:7.3f} ms each (incl. host gaps); SM clock median "
              f"{statistics.median(mhz):.0f} MHz (min {min(mhz):.0f}, max {max(mhz):.0f}, {len(mhz)} samples), "
              f"power median {statistics.median(watts):.0f} W", flush=True)
    else:
        print(f"{name:<28} no samples: {sampler.samples[-3:]}", flush=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--cases", default="B1_T8192")
    p.add_argument("--modes", default="g,gate")
    p.add_argument("--seconds", type=float, default=2.0)
    args = p.parse_args()
    sampler = Sampler()
    time.sleep(0.5)
    try:
        for name in args.cases.split(","):
            B, T = CASES[name]
            for mode in args.modes.split(","):
                c, ht, out = warm_case(B, T, mode)
                graphs = {
                    "stage 1 alone": _capture(ours_fn(c, ht, out, stage="intra")),
                    "state alone (one launch)": _capture(ours_fn(c, ht, out, stage="state")),
                    "whole call": _capture(ours_fn(c, ht, out)),
                }
                print(f"--- {name} {mode}", flush=True)
                run_phase("idle", None, args.seconds, sampler)
                for label, graph in graphs.items():
                    run_phase(label, graph.replay, args.seconds, sampler)
                run_phase("idle", None, args.seconds, sampler)
                del graphs, c, ht, out
                workspace.empty_cache()
    finally:
        sampler.stop()


if __name__ == "__main__":
    main()
