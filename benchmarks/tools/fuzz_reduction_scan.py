"""Racecheck's lane-copy hazard looked for offline, no GPU needed: the KDA kernels compiled for sm_90 (driver
stubbed) for the random public calls ``fuzz_public_ops.py`` draws for a GPU, each new compiled variant checked
by ``tests/kda/decode_reduction_ptx.reduction_stores``: a butterfly-reduced value that every lane stores to
shared memory must not take a shuffled value into an FMA (the lanes' copies would differ and the store race;
docs/history/decode.md, fifty-sixth and fifty-seventh sessions). Grouped value heads, speculative forms, bf16 pools,
every gate mode and fused-projection strides come with the draws. Prints each flagged variant with the call
that compiled it, then the counts; exits 1 if any was flagged. Not under ``TRITON_INTERPRET=1``.

    PYTHONPATH=$PWD python3 benchmarks/tools/fuzz_reduction_scan.py SEED [SEED ...] [--calls 200]

Seeds 58-61 at 200 calls (1,181 variants) took 15 minutes on two CPUs that a CI run shared."""
import argparse
import collections
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, "../../tests/kda"), HERE]
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
    sys.exit(1 if flagged else 0)


if __name__ == "__main__":
    main()
