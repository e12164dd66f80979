"""Host time of eager extend calls whose token counts change every call, as serving engines make them.

SGLang and vLLM run extend (prefill) eagerly, and a batch's token count and request lengths differ
from one call to the next, so every call misses the eager shortcut (which needs a repeated
signature) and runs the full Python path. This times that path against the GPU time of the same
calls: ``KDABackend.extend`` over a pool (softplus gate, L2 norm and beta sigmoid in the kernels,
K = V = 128, bf16), batches of N requests whose lengths are drawn anew for every call, and FLA's
``chunk_kda`` on the same inputs where it is installed. Cases (``--cases``): 1, 4 and 8 requests at 32
heads (one part), one prompt of 1024-4096 tokens at 32 heads (pipelined parts) and one of 2048-8192
tokens at 4 and 8 heads (segments: tensor-parallel ranks of a 32-head model).

Per case: the median host time until a call returns after an idle GPU, the back-to-back pace (calls
enqueued without synchronizing), the GPU time of one such call (CUDA events around a call whose
launches were queued behind a long kernel, so the host is not on the clock), and a cProfile of the
varying calls (top functions by own time and by cumulative time).

    PYTHONPATH=$PWD python3 benchmarks/tools/extend_host_gpu.py [--cases ...] [--layers L] [--ab ROUNDS [--ab-only]]
        [--pieces] [--profile]
"""
import argparse
import contextlib
import cProfile
import io
import pstats
import time

import torch

import kimiops
from kimiops.bench.timing import each_call_us, queued_gpu_us

K = V = 128
SLOTS = 64
# name: (heads, requests, shortest, longest request)
CASES = {"1x64-512": (32, 1, 64, 512), "4x32-256": (32, 4, 32, 256), "8x100-400": (32, 8, 100, 400),
         "parts": (32, 1, 1024, 4096), "segments4": (4, 1, 2048, 8192), "segments8": (8, 1, 2048, 8192)}


_USED_TOTALS: set = set()


def make_batches(n_req: int, count: int, lo: int, hi: int, gen: torch.Generator, H: int = 32) -> list:
    """``count`` extend batches of ``n_req`` requests with lengths in ``[lo, hi]``, each with a token
    count no earlier batch of this process had (so no call repeats a signature the eager shortcut
    could have recorded); ``H`` heads (H = HV)."""
    out = []
    while len(out) < count:
        lens = torch.randint(lo, hi + 1, (n_req,), generator=gen)
        cu = torch.zeros(n_req + 1, dtype=torch.int32)
        cu[1:] = torch.cumsum(lens, 0)
        T = int(cu[-1])
        if (n_req, T, H) in _USED_TOTALS:
            continue
        _USED_TOTALS.add((n_req, T, H))
        d = "cuda"
        q, k, g = (torch.randn(1, T, H, K, device=d).to(torch.bfloat16) for _ in range(3))
        v = torch.randn(1, T, H, V, device=d).to(torch.bfloat16)
        beta = torch.randn(1, T, H, device=d).to(torch.bfloat16)
        idx = torch.randperm(SLOTS)[:n_req].to(torch.int32)
        out.append((q, k, v, g, beta, cu.to(d), idx.to(d)))
    return out


@contextlib.contextmanager
def elastic_replay(on: bool):
    """Within it, varlen prefill calls with a new token count take the elastic replay (``on``) or,
    as before it, the full path (no ``ElasticPrefill`` is recorded and none is kept)."""
    from kimiops.kda import runner  # noqa: PLC0415
    from kimiops.kda.kernels import chunk  # noqa: PLC0415
    build = chunk.ElasticPrefill.__dict__["build"]  # the classmethod object itself
    runner._elastic.clear()
    if not on:
        chunk.ElasticPrefill.build = classmethod(lambda cls, *a: None)
    try:
        yield
    finally:
        setattr(chunk.ElasticPrefill, "build", build)
        runner._elastic.clear()


def timed_pieces():
    """Wrap the prefill host path's pieces with inclusive timers; returns (totals dict, restore)."""
    from kimiops.kda import args as kargs, runner, workspace  # noqa: PLC0415
    from kimiops.kda.kernels import chunk  # noqa: PLC0415
    import kimiops.launch as kl  # noqa: PLC0415
    totals: dict = {}
    patched = []

    def wrap(mod, name, label):
        fn = getattr(mod, name)

        def timed(*a, **kw):
            t0 = time.perf_counter()
            try:
                return fn(*a, **kw)
            finally:
                rec = totals.setdefault(label, [0.0, 0])
                rec[0] += time.perf_counter() - t0
                rec[1] += 1
        setattr(mod, name, timed)
        patched.append((mod, name, fn))

    wrap(runner, "eager_call", "runner.eager_call (shortcut lookup)")
    wrap(runner, "run_kda", "runner.run_kda (validation + launcher)")
    wrap(runner, "check_kda_args", "  args.check_kda_args")
    wrap(chunk, "chunk_kda_fwd", "  chunk.chunk_kda_fwd")
    wrap(chunk, "_plan", "    chunk._plan")
    wrap(chunk, "get_buffer", "      workspace.get_buffer")
    wrap(chunk, "_launch", "    chunk._launch")
    wrap(chunk, "_launch_order", "      _launch_order")
    wrap(chunk, "_launch_intra", "      _launch_intra")
    wrap(chunk, "_launch_state", "      _launch_state")
    wrap(chunk, "launch", "        kimiops.launch.launch")
    wrap(kl, "specialization_key", "          specialization_key")
    wrap(kl, "jit_launch", "          jit_launch (Triton's own path)")
    wrap(runner, "seen_before", "runner.seen_before")
    del kargs, workspace

    def restore():
        for mod, name, fn in patched:
            setattr(mod, name, fn)
    return totals, restore


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--profile", action="store_true", help="cProfile the varying kimiops calls")
    p.add_argument("--calls", type=int, default=60)
    p.add_argument("--pieces", action="store_true", help="inclusive time per call of the host path's pieces")
    p.add_argument("--layers", type=int, default=1,
                   help="calls per batch, one after the other (a model's KDA layers: every call but the first of "
                        "a batch repeats the previous call's counts)")
    p.add_argument("--ab", type=int, default=0, metavar="ROUNDS",
                   help="also time new token counts with the elastic replay switched off, alternating, ROUNDS rounds")
    p.add_argument("--cases", nargs="+", choices=list(CASES), default=["1x64-512", "4x32-256", "8x100-400"])
    p.add_argument("--ab-only", action="store_true",
                   help="with --ab: skip the other measurements and FLA (a cold machine spends minutes compiling)")
    args = p.parse_args()
    try:
        from fla.ops.kda import chunk_kda as fla_chunk_kda  # noqa: PLC0415
    except Exception as err:  # noqa: BLE001
        fla_chunk_kda = None
        print(f"FLA not available: {type(err).__name__}: {err}")
    gen = torch.Generator().manual_seed(0)
    tiny = torch.zeros(16, device="cuda")
    print(f"kimiops {kimiops.__file__}; torch.add_ until return {each_call_us([lambda: tiny.add_(1)] * 200).until:.1f} us")
    A_log_all = torch.log(torch.rand(32, generator=gen) * 15 + 1).cuda()
    dt_all = (torch.randn(32 * K, generator=gen) * 0.5).cuda()
    setups = {}

    def setup(H):  # pool, A_log, dt_bias and backend at H heads
        if H not in setups:
            setups[H] = (torch.zeros(SLOTS, H, V, K, device="cuda"), A_log_all[:H].contiguous(),
                         dt_all[:H * K].contiguous(), kimiops.KDABackend(H, K, V))
        return setups[H]

    def ours(b):
        q, k, v, g, beta, cu, idx = b
        pool, A_log, dt, be = setup(q.shape[2])
        return lambda: be.extend(q, k, v, g, beta, ssm_states=pool, cache_indices=idx, query_start_loc=cu,
                                 A_log=A_log, dt_bias=dt)

    def fla(b):
        q, k, v, g, beta, cu, idx = b
        pool, A_log, dt, _ = setup(q.shape[2])
        h0, cu64 = pool[idx.long()], cu.long()  # FLA 0.6 takes dense states, not a pool
        return lambda: fla_chunk_kda(q, k, v, g, beta, initial_state=h0, use_qk_l2norm_in_kernel=True,
                                     use_gate_in_kernel=True, A_log=A_log, dt_bias=dt, use_beta_sigmoid_in_kernel=True,
                                     cu_seqlens=cu64, output_final_state=True, state_v_first=True)

    for case in args.cases:
        H, n_req, lo, hi = CASES[case]
        warm = make_batches(n_req, 40, lo, hi, gen, H)  # compiles every specialization the lengths reach
        for b in warm:
            ours(b)()
        if args.ab_only:
            batches = []
        else:
            batches = make_batches(n_req, args.calls, lo, hi, gen, H)
        until = each_call_us([ours(b) for b in batches]).until if batches else None
        gpu = queued_gpu_us([ours(b) for b in make_batches(n_req, args.calls, lo, hi, gen, H)])
        if args.ab_only:
            print(f"{case}: {H} heads, N={n_req} lengths {lo}-{hi}: GPU {gpu:.1f} us", flush=True)
        else:
            pace = each_call_us([ours(b) for b in make_batches(n_req, args.calls, lo, hi, gen, H)]).pace
            r_until, _, r_pace, _ = each_call_us([ours(batches[0])] * args.calls)
            line = (f"{case}: {H} heads, N={n_req} lengths {lo}-{hi}: new token counts: until return {until:.1f} us, pace {pace:.1f}; "
                    f"one signature repeated {r_until:.1f} / {r_pace:.1f}; GPU {gpu:.1f} us")
            if fla_chunk_kda is not None:
                try:
                    fl = [fla(b) for b in batches]
                    for fn in fl[:5]:
                        fn()
                    f_until, _, f_pace, _ = each_call_us(fl)
                    line += f"; FLA until return {f_until:.1f}, pace {f_pace:.1f}, GPU {queued_gpu_us(fl):.1f}"
                except Exception as err:  # noqa: BLE001
                    line += f"; FLA failed: {type(err).__name__}: {err}"
            print(line, flush=True)
        for rnd in range(args.ab):
            times = {}
            for mode in ("elastic replay", "without it"):
                with elastic_replay(mode == "elastic replay"):
                    for b in make_batches(n_req, 20, lo, hi, gen, H):  # (re)learns the kernel variants
                        ours(b)()
                    times[mode] = each_call_us([ours(b) for b in make_batches(n_req, args.calls, lo, hi, gen, H)
                                                for _ in range(args.layers)]).until
            print(f"  A/B round {rnd + 1}, new token counts ({args.layers} calls per batch), until return: "
                  + ", ".join(f"{m} {t:.1f} us" for m, t in times.items()), flush=True)
        if args.pieces:
            fresh = [ours(b) for b in make_batches(n_req, args.calls, lo, hi, gen, H)]
            totals, restore = timed_pieces()
            try:
                until = each_call_us(fresh).until
            finally:
                restore()
            print(f"--- pieces, inclusive us per call over {len(fresh)} new token counts (until return {until:.1f} us, "
                  f"with the timers)")
            for label, (sec, n) in totals.items():
                print(f"{sec / len(fresh) * 1e6:9.1f} us  {label}  ({n / len(fresh):.1f} calls per call)")
        if args.profile:
            varying = [ours(b) for b in make_batches(n_req, args.calls, lo, hi, gen, H)]
            prof = cProfile.Profile()
            torch.cuda.synchronize()
            prof.enable()
            for fn in varying:
                fn()
            prof.disable()
            torch.cuda.synchronize()
            for key in ("tottime", "cumtime"):
                s = io.StringIO()
                pstats.Stats(prof, stream=s).sort_stats(key).print_stats(30)
                print(f"--- cProfile of {len(varying)} varying calls, by {key}")
                print("\n".join(s.getvalue().splitlines()[4:]))


if __name__ == "__main__":
    main()
