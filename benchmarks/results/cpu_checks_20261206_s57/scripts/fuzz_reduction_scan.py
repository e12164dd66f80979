"""Fifty-seventh session: the KDA kernels' stored butterfly reductions (``tests/kda/decode_reduction_ptx.
reduction_stores``, offline sm_90) over the calls ``benchmarks/tools/fuzz_public_ops.py`` draws for a GPU: every
new compiled variant of ``calls`` draws per seed is checked, so the random options the targeted scans do not
vary (grouped value heads, speculative forms, bf16 pools, gate modes, fused-projection strides, track) are
covered too. Prints each variant that stores a reduction with a shuffle-fed FMA, with the call that compiled it,
then the counts.

    PYTHONPATH=<tree> python3 fuzz_reduction_scan.py SEED [SEED ...] [--calls 200]"""
import argparse
import collections
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, "../../../../tests/kda"), os.path.join(HERE, "../../../../benchmarks/tools")]
import fuzz_public_ops as F  # noqa: E402
from decode_reduction_ptx import reduction_stores  # noqa: E402

from kimiops.launch import compiling_in_background  # noqa: E402
from kimiops.testing import offline_sm90  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("seeds", type=int, nargs="+")
    ap.add_argument("--calls", type=int, default=200)
    args = ap.parse_args()
    offline_sm90()
    seen, flagged = collections.Counter(), 0
    for seed in args.seeds:
        for i in range(args.calls):
            d = F.Draw(seed * 100003 + i)
            c = F.draw_call(d, 0.25, cuda=True)
            x = F.make_tensors(d, c)
            fn, ins, kw, _ = F.call_args(c, x, "triton", torch.device("cpu"))
            with compiling_in_background(1) as mode:
                fn(*ins, **kw)
            for fk in mode.future_kernels.values():
                k = fk.future.result()
                stores, fused = reduction_stores(k.asm["ptx"])
                seen[(k.name, bool(stores))] += 1
                if fused:
                    flagged += 1
                    print(f"seed {seed} [{i}] {k.name} warps {k.metadata.num_warps}: [{stores}, {fused}] "
                          f"{F.describe(c)}", flush=True)
    print("variants compiled (kernel, stores a reduction):", dict(seen))
    print(f"variants with a shuffle-fed FMA in a stored reduction: {flagged}")


if __name__ == "__main__":
    main()
