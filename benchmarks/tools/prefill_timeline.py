"""GPU timeline of one chunked-prefill call (kernel start, end, duration in us relative to the
call's first kernel), from the PyTorch profiler's CUDA activity trace (Nsight Systems is not
installed on the device machine). Shows how the pipelined parts' kernels overlap.

    PYTHONPATH=$PWD python3 benchmarks/tools/prefill_timeline.py --seq-len 8192 [--gate]

H = HV = 32, K = V = 128, bf16, the inputs of ``benchmarks/profile_kda_prefill.py``.
"""
import argparse
import json
import os
import tempfile

import torch

import kimiops


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--seq-len", type=int, default=8192)
    p.add_argument("--gate", action="store_true", help="raw gate logits, softplus gate in the kernel")
    p.add_argument("--calls", type=int, default=3, help="profiled calls; the last one is printed")
    p.add_argument("--parts", type=int, default=0, help="pipelined parts (0: the launcher's choice)")
    p.add_argument("--split-gap", type=float, default=100.0,
                   help="a gap between kernels longer than this (us) separates two calls")
    p.add_argument("--wide", action="store_true", help="wide state tiles also in one part (the parts' tiling)")
    p.add_argument("--flush-before-state", action="store_true",
                   help="overwrite a 256 MiB buffer before each state launch (evicts L2; experiment)")
    args = p.parse_args()
    if args.flush_before_state:
        from kimiops.kda.kernels import chunk

        flush = torch.empty(256 * 2**20, dtype=torch.uint8, device="cuda")
        launch_state = chunk._launch_state

        def flushed(*a, **kw):
            flush.zero_()
            return launch_state(*a, **kw)

        chunk._launch_state = flushed
    if args.wide:
        from kimiops.kda.kernels import chunk

        tiles_for = chunk.state_config_for
        chunk.state_config_for = lambda pairs, pipelined=False: tiles_for(pairs, pipelined=True)
    if args.parts:
        from kimiops.kda.kernels import chunk

        chunk.PIPELINE_CONFIG.update(max_parts=args.parts, min_part_slots=1, below_pairs=1 << 30)
    B, T, H, D = args.batch, args.seq_len, 32, 128
    torch.manual_seed(0)
    q, k, v = (torch.randn(B, T, H, D, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    g = torch.nn.functional.logsigmoid(torch.randn(B, T, H, D, device="cuda") + 3)
    beta = torch.rand(B, T, H, device="cuda", dtype=torch.bfloat16)
    gate = {}
    if args.gate:
        g = torch.randn(B, T, H, D, device="cuda", dtype=torch.bfloat16)
        gate = dict(use_gate_in_kernel=True, A_log=torch.log(torch.rand(H, device="cuda") * 15 + 1),
                    dt_bias=torch.zeros(H * D, device="cuda"))

    def call():
        return kimiops.chunk_kda(q, k, v, g, beta, output_final_state=True, use_qk_l2norm_in_kernel=True, **gate)

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
    # calls are separated by host syncs: split where the gap between kernels exceeds --split-gap
    calls, cur = [], [events[0]]
    for prev, e in zip(events, events[1:]):
        if e["ts"] - (prev["ts"] + prev["dur"]) > args.split_gap:
            calls.append(cur)
            cur = []
        cur.append(e)
    calls.append(cur)
    last = calls[-1]
    t0 = last[0]["ts"]
    print(f"{torch.cuda.get_device_name()}; B{B} T{T} {'in-kernel gate' if args.gate else 'precomputed g'}; "
          f"{len(calls)} calls traced, the last one: {len(last)} kernels, "
          f"{max(e['ts'] + e['dur'] for e in last) - t0:.1f} us first start to last end")
    print(f"{'kernel':<34} {'grid':>12} {'start':>8} {'end':>8} {'dur':>7}  (us)")
    for e in last:
        grid = "x".join(str(x) for x in e.get("args", {}).get("grid", []))
        print(f"{e['name'][:34]:<34} {grid:>12} {e['ts'] - t0:8.1f} {e['ts'] + e['dur'] - t0:8.1f} {e['dur']:7.1f}")


if __name__ == "__main__":
    main()
