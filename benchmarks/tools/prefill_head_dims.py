"""Prefill at other head dims (K, V) against FLA's ``chunk_kda`` in one process: the library's
default call, then each state-config row, CUDA-graph medians (whole call; stage 1 and the state stage
alone for the default), and how far each row's output and final state lie from FLA's and from the
default's (relative error; the same bits give 0).

Rows are ``bench_kda_prefill.parse_overrides`` strings separated by ';', each optionally followed by
``|`` and pipeline overrides (``parts=N``: N pipelined parts; ``segments=N``: N segments, 1 for
none; without them the library's own rules cut the call).

    PYTHONPATH=$PWD:$PWD/benchmarks python3 benchmarks/tools/prefill_head_dims.py --dims 256x256 \
        --heads 16 --configs "BV=16,num_warps=4;BV=32,num_warps=4|parts=1"
"""
import argparse

import torch

import bench_kda_prefill as bench
from kimiops.kda import workspace
from kimiops.testing import rel_err

CASES = {"B1_T8192": (1, 8192), "B4_T4096": (4, 4096), "B8_T1024": (8, 1024), "B1_T32768": (1, 32768),
         "B1_T2048": (1, 2048), "B1_T4096": (1, 4096), "B2_T8192": (2, 8192), "B1_T16384": (1, 16384)}


def parse_row(row: str):
    """``"key=value,..|key=value,.."`` -> (state overrides, pipeline config or None); in the pipeline
    part ``parts=N`` stands for ``bench_kda_prefill._forced_parts(N)``, other keys are
    ``PIPELINE_CONFIG`` keys (e.g. ``segments=16``; ``segments=1`` switches segments off)."""
    state, _, pipe_text = row.partition("|")
    pipe = bench.parse_overrides(pipe_text) if pipe_text else None
    if pipe and "parts" in pipe:
        pipe = dict(bench._forced_parts(pipe.pop("parts")), **pipe)
    return bench.parse_overrides(state), pipe


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--dims", default="256x256", help="comma-separated KxV")
    p.add_argument("--heads", type=int, default=16, help="H = HV")
    p.add_argument("--cases", default="B1_T8192,B4_T4096")
    p.add_argument("--modes", default="g,gate")
    p.add_argument("--configs", default="", help="state-config rows (see the docstring)")
    p.add_argument("--rep", type=int, default=20)
    args = p.parse_args()
    heads = args.heads
    print(f"device {torch.cuda.get_device_name()}, torch {torch.__version__}, fla {bench.FLA_VERSION}, "
          f"H = HV = {heads}", flush=True)
    for dims in args.dims.split(","):
        K, V = (int(x) for x in dims.split("x"))
        bench.K, bench.V = K, V  # the benchmark's case builders and callers read these module globals
        for name in args.cases.split(","):
            B, T = CASES[name]
            for mode in args.modes.split(","):
                tag = f"K{K} V{V} {name} {mode}"
                c = bench.make_case(B, T, mode, h=heads, hv=heads)
                ht = torch.empty(B, heads, K, V, device="cuda")
                out = torch.empty_like(c["v"])
                ours = bench.ours_fn(c, ht, out)
                ours()
                ref_o, ref_s = out.clone(), ht.clone()
                t_ours = bench.bench_graph(ours, args.rep)
                t_intra = bench.bench_graph(bench.ours_fn(c, ht, out, stage="intra"), args.rep)
                ours()
                t_state = bench.bench_graph(bench.ours_fn(c, ht, out, stage="state"), args.rep)
                fla = bench.fla_fn(c)
                fo, fs = fla()
                t_fla = bench.bench_graph(fla, args.rep)
                print(f"{tag} default: ours {t_ours:.3f} ms (stage 1 {t_intra:.3f}, state {t_state:.3f}), "
                      f"FLA {t_fla:.3f} ms, speedup {t_fla / t_ours:.2f}x; vs FLA: o {rel_err(ref_o, fo):.2e}, "
                      f"state {rel_err(ref_s, fs):.2e}", flush=True)
                for row in (r for r in args.configs.split(";") if r):
                    state, pipe = parse_row(row)
                    fn = bench.ours_fn(c, ht, out, state=state, pipeline=pipe)
                    try:
                        fn()
                        eo, es = rel_err(out, ref_o), rel_err(ht, ref_s)
                        t = bench.bench_graph(fn, args.rep)
                        print(f"{tag} {row:<48} {t:.3f} ms ({t_fla / t:.2f}x FLA); vs default: o {eo:.2e}, "
                              f"state {es:.2e}", flush=True)
                    except Exception as e:  # a config that does not compile or launch
                        print(f"{tag} {row:<48} failed: {type(e).__name__}: {str(e)[:200]}", flush=True)
                del c, ht, out, fo, fs
                workspace.empty_cache()
                torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
