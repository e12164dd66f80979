"""Fifty-seventh session: tests/kda/decode_reduction_ptx.py's check over the prefill kernels for the inputs the
fifty-sixth session's scan (bf16 with an initial state, ``cpu_checks_20261206_s56/kda_reduction_scan.log``) did
not draw: fp16 and fp32 inputs, with and without an initial state, head dims 16-128, precomputed g and the
softplus gate, both state layouts, one part (T 64, 32 heads), pipelined parts (T 4096, 32 heads) and segments
(T 8192, 4 heads). The decode kernel's second race came from such a combination (fp32, no initial state; docs/
decode.md). Prints per compiled variant ``[stores, fused]`` as ``reduction_stores`` defines them.

    PYTHONPATH=$PWD python3 benchmarks/results/cpu_checks_20261206_s57/scripts/prefill_dtype_scan.py [dims ...]"""
import collections
import os
import sys

import torch

import kimiops
from kimiops.launch import compiling_in_background
from kimiops.testing import offline_sm90

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "../../../../tests/kda"))
from decode_reduction_ptx import reduction_stores  # noqa: E402


def main():
    offline_sm90()
    dims = [int(a) for a in sys.argv[1:]] or [16, 32, 64, 128]
    seen, bad = collections.Counter(), []
    for dtype in (torch.float32, torch.float16):
        for dim in dims:
            for gate in ("g", "softplus"):
                for v_first in (False, True):
                    for state in ("initial", "none"):
                        for T, H in ((64, 32), (4096, 32), (8192, 4)):
                            q = torch.randn(1, T, H, dim, dtype=dtype)
                            g = q.float().clamp(max=0).to(dtype) if gate == "g" else q
                            kw = dict(use_gate_in_kernel=True, A_log=torch.zeros(H),
                                      dt_bias=torch.zeros(H * dim)) if gate == "softplus" else {}
                            if state == "initial":
                                kw["initial_state"] = torch.zeros(1, H, dim, dim)
                            with compiling_in_background(1) as mode:
                                kimiops.chunk_kda(q, q, q, g, torch.randn(1, T, H, dtype=dtype), output_final_state=True,
                                                  use_qk_l2norm_in_kernel=True, use_beta_sigmoid_in_kernel=True,
                                                  state_v_first=v_first, **kw)
                            label = f"{str(dtype)[6:]:8s} dim {dim:3d} {gate:8s} v_first {int(v_first)} {state:7s} T {T} H {H}"
                            for fk in mode.future_kernels.values():
                                k = fk.future.result()
                                stores, fused = reduction_stores(k.asm["ptx"])
                                seen[k.name] += 1
                                print(f"{label:58s} {k.name:22s} warps {k.metadata.num_warps}: [{stores}, {fused}]",
                                      flush=True)
                                if fused:
                                    bad.append((label, k.name))
    print(f"kernels compiled: {dict(seen)}")
    print(f"variants with a fused shuffle in a stored reduction: {len(bad)}")
    for label, name in bad:
        print(f"  {label}: {name}")


if __name__ == "__main__":
    main()
