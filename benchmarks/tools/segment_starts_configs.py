"""Launch configs of ``segment_starts_kernel`` (``SEGMENT_STARTS_CONFIG``): the segmented state
stage alone and the whole call, CUDA-graph medians, for each config row, with how far each row's
output and final state lie from the default config's (relative error; the same bits give 0).

Rows are ``key=value,...`` strings separated by ';' (keys of ``SEGMENT_STARTS_CONFIG``: BV,
num_warps, num_stages, prec).

    PYTHONPATH=$PWD:$PWD/benchmarks python3 benchmarks/tools/segment_starts_configs.py --heads 4 \
        --segments 16,32 --configs "prec=ieee;num_warps=4"
"""
import argparse

import torch

import bench_kda_prefill as bench
from kimiops.kda.kernels.chunk_state import SEGMENT_STARTS_CONFIG
from kimiops.testing import rel_err
from prefill_head_dims import CASES


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--cases", default="B1_T8192")
    p.add_argument("--segments", default="16")
    p.add_argument("--configs", default="")
    p.add_argument("--rep", type=int, default=20)
    args = p.parse_args()
    default = dict(SEGMENT_STARTS_CONFIG)
    print(f"device {torch.cuda.get_device_name()}, torch {torch.__version__}, H = HV = {args.heads}, "
          f"default {default}", flush=True)
    for name in args.cases.split(","):
        B, T = CASES[name]
        c = bench.make_case(B, T, "g", h=args.heads, hv=args.heads)
        ht = torch.empty(B, args.heads, bench.K, bench.V, device="cuda")
        out = torch.empty_like(c["v"])
        for seg in (int(x) for x in args.segments.split(",")):
            pipe = {"segments": seg}
            ref = None
            for row in [""] + [r for r in args.configs.split(";") if r]:
                SEGMENT_STARTS_CONFIG.clear()
                SEGMENT_STARTS_CONFIG.update(default, **bench.parse_overrides(row))
                try:
                    call = bench.ours_fn(c, ht, out, pipeline=pipe)
                    call()
                    if ref is None:
                        ref = (out.clone(), ht.clone())
                    eo, es = rel_err(out, ref[0]), rel_err(ht, ref[1])
                    t_call = bench.bench_graph(call, args.rep)
                    t_state = bench.bench_graph(bench.ours_fn(c, ht, out, stage="state", pipeline=pipe), args.rep)
                    print(f"{name} segments={seg} {row or 'default':<36} call {t_call:.3f} ms, state {t_state:.3f} ms; "
                          f"vs default: o {eo:.2e}, state {es:.2e}", flush=True)
                except Exception as e:  # a config that does not compile or launch
                    print(f"{name} segments={seg} {row:<36} failed: {type(e).__name__}: {str(e)[:160]}", flush=True)
    SEGMENT_STARTS_CONFIG.clear()
    SEGMENT_STARTS_CONFIG.update(default)


if __name__ == "__main__":
    main()
