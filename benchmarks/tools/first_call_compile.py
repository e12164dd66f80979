"""What a cold start costs: wall time of the first and second call of each public entry point in a
new process, with an empty Triton cache (every kernel compiled) and again with that cache filled
(kernels loaded from disk), for ours and, with ``--fla``, FLA 0.6's ``chunk_kda`` /
``fused_recurrent_kda`` on the same inputs. H = HV = 32, K = V = 128, bf16; the prefill cases are
``bench_kda_prefill.py``'s (``make_case``), decode steps ``bench_kda_decode.py``'s (``Case``: raw gate
logits, q / k before the L2 norm, beta logits, an fp32 pool updated in place) through the public calls.

    PYTHONPATH=$PWD:$PWD/benchmarks python3 benchmarks/tools/first_call_compile.py [--fla] [--cases a,b]

``extend_walk`` times ten varlen extends of new token and request counts one after the other (its
"first call" is the walk's first pass, its "second" the whole walk again): the compiles a fresh
server meets as requests arrive. ``backend_walk`` is the same walk through ``KDABackend.extend`` as
serving calls it (raw gate logits with ``A_log`` / ``dt_bias``, beta logits, q / k before the L2 norm, an
fp32 pool with indices); ``backend_walk_warm`` runs ``KDABackend.warmup`` first (its time in the
last column, compiling on its default threads) and then the walk; ``backend_walk_warm1`` likewise with
the warm-up on one compile thread.

Each (case, implementation) runs in its own process (``--one CASE IMPL`` is that child), so no
kernel is compiled or loaded by an earlier case; the parent prints one line per run and the sums.
GPU only (on the CPU the kernels run in Triton's interpreter, which compiles nothing).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import bench_kda_decode as bd  # noqa: E402
import bench_kda_prefill as bp  # noqa: E402

import kimiops  # noqa: E402

# name -> (B, T, gate mode, varlen lengths); decode cases are "decode_N<n>"
PREFILL_CASES = {
    "prefill_g_B1_T8192": (1, 8192, "g", None),  # pipelined parts
    "prefill_gate_B1_T8192": (1, 8192, "gate", None),
    "prefill_g_B8_T1024": (8, 1024, "g", None),
    "prefill_g_B1_T512": (1, 512, "g", None),  # one part
    "prefill_g_varlen7": (1, sum(bp.VARLEN_LENS), "g", bp.VARLEN_LENS),
}
DECODE_CASES = {"decode_N1": 1, "decode_N64": 64}
# name -> the requests of each extend of a serving engine's first calls (varlen, precomputed g): new
# token totals (1, multiples of 16 and not) and request counts, as a fresh server meets them
WALK_CASES = {"extend_walk": [[7], [100, 28], [300, 212, 16], [1000], [1], [64, 64], [900, 37, 5], [2048],
                              [33, 33, 33, 33], [500, 12]]}
# WALK_CASES["extend_walk"] through KDABackend.extend: alone, after the warm-up, after it on one compile thread
BACKEND_WALKS = ("backend_walk", "backend_walk_warm", "backend_walk_warm1")
CASES = [*PREFILL_CASES, *DECODE_CASES, *WALK_CASES, *BACKEND_WALKS]


def chunk_kda_call(B: int, T: int, mode: str, lens, impl: str):
    """One ``chunk_kda`` call on ``bench_kda_prefill.make_case``'s inputs (bf16, the L2 norm in the
    kernel, the final state returned); FLA's the way that benchmark calls it."""
    c = bp.make_case(B, T, mode, lens=lens)
    if impl == "fla":
        return bp.fla_fn(c)
    gate = {} if mode == "g" else dict(use_gate_in_kernel=True, A_log=c["A_log"], dt_bias=c["dt_bias"])
    return lambda: kimiops.chunk_kda(c["q"], c["k"], c["v"], c["g"], c["beta"], scale=bp.K**-0.5,
                                     output_final_state=True, use_qk_l2norm_in_kernel=True,
                                     cu_seqlens=c["cu"], **gate)


def public_prefill(name: str, impl: str):
    """The ``chunk_kda`` call of case ``name`` (``PREFILL_CASES``)."""
    return chunk_kda_call(*PREFILL_CASES[name], impl)


def public_decode(name: str, impl: str):
    """One decode step of ``bench_kda_decode.Case`` (raw gate logits, beta logits, the L2 norm in the
    kernel, an fp32 pool ``[slots, HV, V, K]`` updated in place) through the public call."""
    N = DECODE_CASES[name]
    gen = torch.Generator(device="cuda").manual_seed(0)
    c = bd.Case(N, torch.zeros(2 * N, bd.HV, bd.V, bd.K, device="cuda"), gen)
    if impl == "fla":
        from fla.ops.kda.fused_recurrent import fused_recurrent_kda_fwd  # noqa: PLC0415

        return c.fla(fused_recurrent_kda_fwd)
    return lambda: kimiops.fused_recurrent_kda(
        c.q, c.k, c.v, c.g, c.beta, initial_state=c.pool, ssm_state_indices=c.idx, cu_seqlens=c.cu,
        state_v_first=True, use_qk_l2norm_in_kernel=True, use_gate_in_kernel=True,
        use_beta_sigmoid_in_kernel=True, A_log=c.A_log, dt_bias=c.dt_bias)


def public_walk(name: str, impl: str):
    """The extends of ``WALK_CASES[name]`` one after the other (each ``chunk_kda`` varlen call on
    ``bench_kda_prefill.make_case``'s inputs, precomputed g, ``chunk_kda_call``)."""
    calls = [chunk_kda_call(1, sum(lens), "g", lens, impl) for lens in WALK_CASES[name]]
    return lambda: [call() for call in calls]


def backend_walk(name: str):
    """Ours only: ``WALK_CASES["extend_walk"]`` through ``KDABackend.extend`` (bf16 inputs, the softplus gate on raw
    logits, beta logits, the L2 norm in the kernel, an fp32 pool ``[slots, HV, V, K]``); returns the walk
    and, for ``backend_walk_warm`` / ``backend_walk_warm1``, the warm-up to run before it (its default compile
    threads / one)."""
    gen = torch.Generator(device="cuda").manual_seed(0)
    H, K = bp.H, bp.K
    backend = kimiops.KDABackend(H, K, K)
    walk = WALK_CASES["extend_walk"]
    pool = torch.zeros(max(map(len, walk)), H, K, K, device="cuda")
    gate = dict(A_log=torch.rand(H, device="cuda", generator=gen),
                dt_bias=torch.randn(H * K, device="cuda", generator=gen))
    calls = []
    for lens in walk:
        T = sum(lens)
        x = [torch.randn(1, T, H, K, device="cuda", generator=gen, dtype=torch.bfloat16) for _ in range(4)]  # q k v g
        beta = torch.randn(1, T, H, device="cuda", generator=gen, dtype=torch.bfloat16)
        cu = torch.tensor([0, *lens], dtype=torch.int32).cumsum(0, dtype=torch.int32).cuda()
        idx = torch.arange(len(lens), dtype=torch.int32, device="cuda")
        calls.append(lambda x=x, beta=beta, cu=cu, idx=idx: backend.extend(
            *x, beta, ssm_states=pool, cache_indices=idx, query_start_loc=cu, **gate))
    workers = {"backend_walk_warm": None, "backend_walk_warm1": 1}
    warm = (lambda: backend.warmup(pool, compile_workers=workers[name], **gate)) if name in workers else None
    return (lambda: [call() for call in calls]), warm


def one(name: str, impl: str) -> dict:
    """The child: inputs built first (the CUDA context is up), then the warm-up where the case has one,
    then two timed calls (s, host to sync)."""
    warm, res = None, {}
    if name in BACKEND_WALKS:
        call, warm = backend_walk(name)
    else:
        call = (public_prefill if name in PREFILL_CASES else public_walk if name in WALK_CASES else public_decode)(
            name, impl)
    torch.cuda.synchronize()
    if warm is not None:
        t0 = time.perf_counter()
        ran = warm()
        torch.cuda.synchronize()
        res["warmup_s"] = time.perf_counter() - t0
        res["warmup_threads_compiled"] = ran["compiled_in_background"]
    times = []
    for _ in range(2):
        t0 = time.perf_counter()
        call()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
    return {"first_s": times[0], "second_s": times[1], **res}


def run_child(name: str, impl: str, cache_dir: str) -> dict:
    env = dict(os.environ, TRITON_CACHE_DIR=cache_dir)
    r = subprocess.run([sys.executable, __file__, "--one", name, impl], env=env, capture_output=True, text=True)
    if r.returncode != 0:
        return {"error": (r.stderr.strip().splitlines() or ["?"])[-1][:200]}
    return json.loads(r.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--fla", action="store_true", help="also FLA 0.6 (fla-core installed)")
    ap.add_argument("--cases", default=",".join(CASES), help=f"comma-separated, from {CASES}")
    ap.add_argument("--one", nargs=2, metavar=("CASE", "IMPL"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(one(*args.one)))
        return
    cases = args.cases.split(",")
    unknown = sorted(set(cases) - set(CASES))
    if unknown:
        raise SystemExit(f"--cases: unknown {unknown}; known {CASES}")
    print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}; seconds, host to sync")
    print(f"{'case':<24} {'impl':<5} {'cold 1st':>9} {'cold 2nd':>9} {'disk 1st':>9} {'disk 2nd':>9}")
    total = {}
    impls = ("ours", "fla") if args.fla else ("ours",)
    with tempfile.TemporaryDirectory() as root:
        for name in cases:  # case by case, both implementations, so a run cut short still compares
            for impl in impls if name not in BACKEND_WALKS else ("ours",):
                cache = os.path.join(root, name, impl)  # empty: this case's kernels compile from scratch
                cold, disk = run_child(name, impl, cache), run_child(name, impl, cache)
                if "error" in cold or "error" in disk:
                    print(f"{name:<24} {impl:<5} failed: {cold.get('error') or disk.get('error')}")
                    continue
                total[impl] = total.get(impl, 0.0) + cold["first_s"]
                warm = f"  warm-up {cold['warmup_s']:.2f} s cold ({cold['warmup_threads_compiled']} compiled on " \
                    f"threads), {disk['warmup_s']:.2f} s from disk" if "warmup_s" in cold else ""
                print(f"{name:<24} {impl:<5} {cold['first_s']:9.2f} {cold['second_s']:9.3f} "
                      f"{disk['first_s']:9.2f} {disk['second_s']:9.3f}{warm}", flush=True)
    for impl, s in total.items():
        print(f"{impl}: first calls with an empty cache sum to {s:.1f} s (each case compiles on its own, "
              f"so kernels that cases share count once per case)")


if __name__ == "__main__":
    main()
