"""Short prompts: the public ``kimiops.chunk_kda`` against FLA's ``chunk_kda`` in one process, on a GPU.

H = HV = 32, K = V = 128, bf16, softplus gate and q/k L2 norm in the kernel, final state out (the
bench's "gate" mode); cases B1 with T in (64, 256, 1024) and B8 x 64 tokens as varlen. Per case and
implementation, in ms:

- ``graph``: median of CUDA-graph replays of one call (the GPU time);
- ``eager``: CUDA events around 50 calls issued back to back, per call (the pace of eager calls:
  the host's time per call where the host is slower than the GPU);
- ``until return``: one call after the GPU went idle, until the call returns (host time).

With ``--sweep`` (no FLA rows): per case, the whole call in a CUDA graph with each stage-1
candidate (``INTRA_CANDIDATES``, the default state config) and each state candidate
(``STATE_CANDIDATES``, the default stage 1), against the defaults; short prompts run few CTAs, so
their best configs may differ from those the long-prompt sweep chose.

    PYTHONPATH=$PWD:<fla> python3 benchmarks/tools/prefill_short_prompts.py [--sweep]
"""
import argparse
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import bench_kda_prefill as bench  # noqa: E402

import kimiops  # noqa: E402
from kimiops.bench.timing import host_us  # noqa: E402
from kimiops.kda.kernels.chunk_intra import INTRA_CANDIDATES  # noqa: E402
from kimiops.kda.kernels.chunk_state import STATE_CANDIDATES  # noqa: E402

CASES = (("B1_T64", 1, 64, None), ("B1_T256", 1, 256, None), ("B1_T1024", 1, 1024, None),
         ("varlen8x64", 1, 512, [64] * 8))


def eager_pace_ms(fn, calls=50):
    """Per call, CUDA events around ``calls`` calls issued back to back (after one warm call)."""
    fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(calls):
        fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / calls


def ours(c):
    cu = c["cu"]

    def run():
        return kimiops.chunk_kda(c["q"], c["k"], c["v"], c["g"], c["beta"], scale=bench.K**-0.5,
                                 output_final_state=True, use_qk_l2norm_in_kernel=True, use_gate_in_kernel=True,
                                 A_log=c["A_log"], dt_bias=c["dt_bias"], cu_seqlens=cu)

    return run


def sweep():
    """Whole-call graph medians (us) per stage-1 and per state candidate, on the short cases."""
    for name, B, T, lens in CASES:
        c = bench.make_case(B, T, "gate", lens=lens)
        ht = torch.empty(len(lens) if lens else B, bench.HV, bench.K, bench.V, device="cuda")
        out = torch.empty_like(c["v"])
        rows = [("default", {}, {})] + [(f"intra {i}", cand, {}) for i, cand in enumerate(INTRA_CANDIDATES)] \
            + [(f"state {i}", {}, cand) for i, cand in enumerate(STATE_CANDIDATES)]
        for label, intra, state in rows:
            fn = bench.ours_fn(c, ht, out, intra=intra or None, state=state or None)
            try:
                fn()
                torch.cuda.synchronize()
                us = bench.bench_graph(fn, 20) * 1e3
                print(f"{name:<12}{label:<10}{us:8.1f} us  {intra or state or ''}", flush=True)
            except Exception as e:  # noqa: BLE001  (a candidate that does not fit this shape)
                print(f"{name:<12}{label:<10} failed: {type(e).__name__}: {str(e)[:160]}", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sweep", action="store_true", help="time every stage-1 and state candidate instead")
    if ap.parse_args().sweep:
        return sweep()
    print(f"{torch.cuda.get_device_name()} torch {torch.__version__} fla {bench.FLA_VERSION}")
    tiny = torch.zeros(16, device="cuda")
    print("torch.add_: until return %.1f us" % host_us(lambda: tiny.add_(1))[1])
    print(f"{'case':<12}{'impl':<6}{'graph ms':>10}{'eager ms':>10}{'until return us':>17}")
    for name, B, T, lens in CASES:
        c = bench.make_case(B, T, "gate", lens=lens)
        for impl, fn in (("ours", ours(c)), ("fla", bench.fla_fn(c))):
            if fn is None:
                continue
            fn()
            torch.cuda.synchronize()
            graph = bench.bench_graph(fn, 20)
            eager = eager_pace_ms(fn)
            ret = host_us(fn)[1]
            graph_txt = f"{graph:10.4f}" if graph is not None else f"{'-':>10}"
            print(f"{name:<12}{impl:<6}{graph_txt}{eager:10.4f}{ret:17.1f}", flush=True)


if __name__ == "__main__":
    main()
