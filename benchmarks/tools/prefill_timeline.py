"""GPU timeline of chunked-prefill calls from the PyTorch profiler's CUDA activity trace (Nsight
Systems is not installed on the device machine): per call its span, its first stage-1 part and what
runs after its last one; then the last call's kernels (start, end, duration in us relative to its first
kernel). Shows how the pipelined parts' kernels overlap.

    PYTHONPATH=$PWD python3 benchmarks/tools/prefill_timeline.py --seq-len 8192 [--gate]

H = HV = 32, K = V = 128, bf16 (precomputed g in fp32), the inputs of
``benchmarks/profile_kda_prefill.py`` (``prefill_call``).
"""
import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from profile_kda_prefill import prefill_call  # noqa: E402

from kimiops.kda.kernels import chunk  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--seq-len", type=int, default=8192)
    p.add_argument("--gate", action="store_true", help="raw gate logits, softplus gate in the kernel")
    p.add_argument("--calls", type=int, default=3, help="profiled calls; the last one is printed")
    p.add_argument("--parts", type=int, default=0, help="pipelined parts (0: the launcher's choice)")
    p.add_argument("--flush-before-state", action="store_true",
                   help="overwrite a 256 MiB buffer before each state launch (evicts L2; experiment)")
    args = p.parse_args()
    if args.flush_before_state:
        flush = torch.empty(256 * 2**20, dtype=torch.uint8, device="cuda")
        launch_state = chunk._launch_state

        def flushed(*a, **kw):
            flush.zero_()
            return launch_state(*a, **kw)

        chunk._launch_state = flushed
    call = prefill_call(args.batch, args.seq_len, args.gate, args.parts)
    B, T = args.batch, args.seq_len

    for _ in range(3):
        call()
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(args.calls):
            torch.cuda.synchronize()
            call()
        torch.cuda.synchronize()
    path = os.path.join(tempfile.mkdtemp(), "trace.json")
    prof.export_chrome_trace(path)
    with open(path) as f:
        events = [e for e in json.load(f)["traceEvents"] if e.get("cat") == "kernel"]
    events.sort(key=lambda e: e["ts"])
    # every call launches the same kernels: split the list into --calls equal groups (the host sync
    # between two calls can leave a gap shorter than a call's own gaps)
    per_call = len(events) // args.calls
    if per_call * args.calls != len(events):
        raise SystemExit(f"{len(events)} kernels for {args.calls} calls: the calls launched different kernels")
    calls = [events[i * per_call:(i + 1) * per_call] for i in range(args.calls)]
    print(f"{torch.cuda.get_device_name()}; B{B} T{T} {'in-kernel gate' if args.gate else 'precomputed g'}; "
          f"{args.calls} calls traced, {per_call} kernels each")
    for i, c in enumerate(calls):
        start, end = c[0]["ts"], max(e["ts"] + e["dur"] for e in c)
        intra_ends = [e["ts"] + e["dur"] for e in c if e["name"].startswith("chunk_intra")]
        print(f"call {i}: {end - start:.1f} us first start to last end; stage 1 of the first part "
              f"{intra_ends[0] - start:.1f} us; after the last stage 1 {end - intra_ends[-1]:.1f} us")
    last = calls[-1]
    t0 = last[0]["ts"]
    print("the last call:")
    print(f"{'kernel':<34} {'grid':>12} {'start':>8} {'end':>8} {'dur':>7}  (us)")
    for e in last:
        grid = "x".join(str(x) for x in e.get("args", {}).get("grid", []))
        print(f"{e['name'][:34]:<34} {grid:>12} {e['ts'] - t0:8.1f} {e['ts'] + e['dur'] - t0:8.1f} {e['dur']:7.1f}")


if __name__ == "__main__":
    main()
