"""The compiles of ``KDABackend.warmup`` on a machine without a GPU: its calls (``warmup.warmup_calls``, CPU
tensors, every request padded) run inside ``kimiops.launch.compiling_in_background``, where nothing
launches and each kernel variant they meet is compiled by Triton for sm_90 (the driver stubbed:
target sm_90, device 0, stream 0; programmatic dependent launch on, as on Hopper). Each worker count
runs in a fresh process with an empty Triton cache; prints the seconds until every compile ended, the
variants per kernel, any compile that failed, and how many compiles the same calls start once more (0:
Triton's in-memory cache, which the warm-up's real pass looks up before launching, holds them all).
The host-side calls are the GPU's (no config depends on the device family, only PDL).

    PYTHONPATH=$PWD:$PWD/benchmarks/tools python3 benchmarks/tools/warmup_compile_offline.py [--workers 1,2]
        [--heads 32] [--dim 128] [--max-requests 256]

Not under ``TRITON_INTERPRET=1`` (the interpreter compiles nothing); the real pass of the warm-up (the
launches) needs a GPU and does not run here.
"""
import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile
import time


def child(workers: int, heads: int, dim: int, max_requests: int) -> dict:
    import torch

    import kimiops
    from kimiops.kda.warmup import warmup_calls
    from kimiops.launch import compiling_in_background
    from kimiops.testing import offline_sm90

    offline_sm90()  # target sm_90, device 0, stream 0, PDL on, the Triton kernels on CPU tensors
    backend = kimiops.KDABackend(heads, dim, dim, backend="triton")
    pool = torch.zeros(1, heads, dim, dim)
    gate = dict(A_log=torch.zeros(heads), dt_bias=torch.zeros(heads * dim))
    calls = warmup_calls(backend, pool, dtype=torch.bfloat16, gate_dtype=torch.bfloat16, max_requests=max_requests,
                         **gate)
    t0 = time.perf_counter()
    with compiling_in_background(workers) as mode:
        for _, _, call in calls:
            call()
    seconds = time.perf_counter() - t0
    # the calls again: every variant they meet is now in Triton's in-memory cache (what the real pass
    # looks up before it launches), so none starts a compile
    with compiling_in_background(workers) as again:
        for _, _, call in calls:
            call()
    names = collections.Counter()
    failed = []
    for key, fk in mode.future_kernels.items():
        err = fk.future.exception()
        if err is not None:
            failed.append(f"{type(err).__name__}: {str(err)[:200]}")
        else:
            names[fk.future.result().name] += 1
    return {"seconds": seconds, "calls": len(calls), "variants": dict(names), "failed": failed,
            "compiled_again": len(again.future_kernels)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workers", default="1,2", help="comma-separated compile thread counts")
    ap.add_argument("--heads", type=int, default=32)
    ap.add_argument("--dim", type=int, default=128)
    ap.add_argument("--max-requests", type=int, default=256)
    ap.add_argument("--one", type=int, help=argparse.SUPPRESS)  # the child: one worker count
    args = ap.parse_args()
    if os.environ.get("TRITON_INTERPRET") == "1":
        raise SystemExit("TRITON_INTERPRET=1: the interpreter compiles nothing; unset it")
    if args.one is not None:
        print(json.dumps(child(args.one, args.heads, args.dim, args.max_requests)))
        return
    print(f"KDABackend({args.heads}, {args.dim}, {args.dim}).warmup(max_requests={args.max_requests}), bf16, the "
          f"softplus gate; sm_90 offline, {os.cpu_count()} CPUs")
    for workers in map(int, args.workers.split(",")):
        with tempfile.TemporaryDirectory() as cache:
            out = subprocess.run([sys.executable, __file__, "--one", str(workers), "--heads", str(args.heads),
                                  "--dim", str(args.dim), "--max-requests", str(args.max_requests)],
                                 env=dict(os.environ, TRITON_CACHE_DIR=cache), capture_output=True, text=True)
        if out.returncode:
            print(f"workers {workers}: failed\n{out.stderr[-3000:]}")
            continue
        res = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"workers {workers}: {res['calls']} calls, {sum(res['variants'].values())} variants compiled in "
              f"{res['seconds']:.1f} s; {res['variants']}; failed: {res['failed'] or 'none'}; the calls again "
              f"compiled {res['compiled_again']}", flush=True)


if __name__ == "__main__":
    main()
