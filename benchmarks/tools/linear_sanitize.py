#!/usr/bin/env python3
"""A few calls of each linear kernel path, for running under NVIDIA's compute-sanitizer (H200/H100).

The Gluon linear's cluster hand-off (``GluonConfig(cluster=True)``, fifty-fifth session) writes each
CTA's fp32 partial over its own pipeline ring and reads the peers' partials through distributed shared
memory (inline PTX ``mapa`` / ``ld.shared::cluster`` between ``barrier.cluster`` syncs), which no
Triton layer checks. Run this under ``compute-sanitizer --tool memcheck`` (out-of-bounds and misaligned
accesses, shared memory of other CTAs included), ``--tool racecheck`` (shared-memory hazards) and
``--tool synccheck`` (barrier misuse). Every call is also checked against an fp64 product (relative error
below 1e-2) and the cluster path against the global hand-off bit for bit, so a run that the sanitizer
passes also computed the right thing. Exits non-zero on a mismatch.

    PYTHONPATH=$PWD compute-sanitizer --tool racecheck --kernel-name kns=linear_kernel \
        python3 benchmarks/tools/linear_sanitize.py
"""
from __future__ import annotations

import argparse

import torch

from kimiops.gemm import skinny_gluon as sg
from kimiops.gemm.skinny import SkinnyConfig, block_m_for, exact_k_split, skinny_linear
from kimiops.testing import rel_err

#: (N, K, M, splits): aligned and ragged weights, 1-32 token rows, cluster sizes 2-8.
CASES = ((1024, 2048, 1, 2), (1000, 2000, 3, 4), (130, 1040, 17, 5), (64, 4096, 32, 8), (2624, 6144, 8, 3),
         (200, 1536, 16, 6), (96, 2688, 9, 7))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--paths", default="cluster,global,triton", help="kernel paths to run")
    args = p.parse_args()
    paths = args.paths.split(",")
    torch.manual_seed(0)
    print(f"{torch.cuda.get_device_name()} torch {torch.__version__}", flush=True)
    for N, K, M, splits in CASES:
        x = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(N, K, device="cuda", dtype=torch.bfloat16) / K**0.5
        b = torch.randn(N, device="cuda", dtype=torch.bfloat16)
        for bias in (None, b):
            ref = x.double() @ w.double().t() + (0 if bias is None else bias.double())
            for out_dtype in (torch.bfloat16, torch.float32):
                results = {}
                for path in paths:
                    y = torch.full((M, N), float("nan"), device="cuda", dtype=out_dtype)
                    k_split = exact_k_split(K, 128, splits)
                    if path == "triton":
                        skinny_linear(x, w, bias, y, SkinnyConfig(64, block_m_for(M), 128, k_split, 4, 4, True))
                    else:
                        cfg = sg.GluonConfig(block_k=128, k_split=k_split, num_stages=3, cluster=path == "cluster")
                        sg.gluon_linear(x, w, bias, y, cfg)
                    torch.cuda.synchronize()
                    err = rel_err(y.double(), ref)
                    print(f"{path:>7} {N}x{K} M={M} splits {splits} bias {bias is not None} out {out_dtype}: "
                          f"rel err {err:.2e}", flush=True)
                    if not err < 1e-2:
                        raise SystemExit(f"{path} {N}x{K} M={M}: rel err {err}")
                    results[path] = y
                if "cluster" in results and "global" in results and not torch.equal(results["cluster"],
                                                                                     results["global"]):
                    raise SystemExit(f"{N}x{K} M={M} splits {splits}: cluster and global hand-offs differ")
    print("all calls matched", flush=True)


if __name__ == "__main__":
    main()
