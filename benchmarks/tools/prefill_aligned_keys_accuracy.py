"""Accuracy of prefill on keys of one direction, on the GPU: keys of one direction
(noise 0.01 or 0.3 of it, cosine ~0.9999 or ~0.9 between any two), a slow precomputed decay
(``with_slow_decay``: ~3e-4 per step), beta near 1 or near 2 (``allow_neg_eigval``), bf16 inputs,
B = 1, T = 1024, H = HV = 4, K = V = 128, q/k L2 norm and beta sigmoid in the kernels. Relative
errors of o and of the final state against the fp64 recurrence, for ours (the ``kimiops`` first on
PYTHONPATH) and, when importable, FLA 0.6's ``chunk_kda`` on the same inputs. In Triton's
interpreter the code before the forty-fourth session was at 6.2e-3 / 6.8e-3 (o / state) at beta ~1 with key noise 0.01, from kg's fp16
rounding repeated chunk after chunk, and 7.3e-2 / 8.1e-2 at beta ~2 with the H200's tf32 truncation
emulated (``benchmarks/results/cpu_checks_20261205_s43/aligned_keys_leave_one_out.log``,
``tf32_truncation_end_to_end.log``); this measures it on the hardware, beside FLA. On the H200
(``benchmarks/results/logs_h200_20261205/r1_aligned_keys_*.log``), on the blocked inverse of the
forty-fourth session: 5.3e-3 / 6.6e-3 at beta ~1, 5.0e-2 / 5.8e-2 at beta ~2 (main before it 5.6e-3 /
7.3e-3 and 7.3e-2 / 8.0e-2), FLA 0.6 4.6-10x further from fp64 in every row.

    PYTHONPATH=<tree>:/tmp/site python3 benchmarks/tools/prefill_aligned_keys_accuracy.py   # repository root

Without a GPU it runs ours in Triton's interpreter (a smoke test: no tf32, see the log above).
"""
import os
import sys

import torch

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
if DEVICE == "cpu":
    os.environ["TRITON_INTERPRET"] = "1"  # before triton is imported

import kimiops  # noqa: E402

sys.path.insert(0, os.path.join(os.getcwd(), "tests", "kda"))
import test_chunk_kernel as tck  # noqa: E402
from kimiops.testing import rel_err  # noqa: E402

try:
    from fla.ops.kda import chunk_kda as fla_chunk_kda
except ImportError:  # FLA is optional: ours alone
    fla_chunk_kda = None

T, H, K, V = 1024, 4, 128, 128


def aligned_inputs(noise, beta_logit, seed=5):
    gen = torch.Generator().manual_seed(seed)
    inp = tck.make_inputs(1, T, H, H, K, V, "none", torch.bfloat16, "cpu", seed=seed, mild=True)
    inp = tck.with_aligned_keys(inp, noise, gen)
    inp["beta"] = (beta_logit + 0.1 * torch.randn(1, T, H, generator=gen)).to(torch.bfloat16)
    inp = tck.with_slow_decay(inp, seed=seed)
    return {n: (x.to(DEVICE) if isinstance(x, torch.Tensor) else x) for n, x in inp.items()}


def call(fn, inp, neg, **kw):
    return fn(inp["q"], inp["k"], inp["v"], inp["g"], inp["beta"], scale=K ** -0.5, output_final_state=True,
              use_qk_l2norm_in_kernel=True, use_beta_sigmoid_in_kernel=True, allow_neg_eigval=neg, **kw)


def main():
    where = torch.cuda.get_device_name() if DEVICE == "cuda" else "CPU (interpreter)"
    print(f"kimiops from {os.path.dirname(kimiops.__file__)}; device {where}; "
          f"FLA {'0.6 chunk_kda' if fla_chunk_kda else 'not importable'}")
    for neg in (False, True):
        for beta_logit in (2.0, 6.0):
            for noise in (0.01, 0.3):
                inp = aligned_inputs(noise, beta_logit)
                ro, rs = tck.reference(inp, gate="none", scale=K ** -0.5, allow_neg_eigval=neg)
                line = f"allow_neg_eigval {neg} beta_logit {beta_logit} key noise {noise}:"
                for name, fn, kw in (("ours", kimiops.chunk_kda, {"backend": "triton"}), ("fla", fla_chunk_kda, {})):
                    if fn is None:
                        continue
                    o, ht = call(fn, inp, neg, **kw)
                    fin = bool(torch.isfinite(o.float()).all() and torch.isfinite(ht).all())
                    line += f"  {name} o {rel_err(o, ro):.2e} state {rel_err(ht, rs):.2e}{'' if fin else ' NON-FINITE'}"
                print(line, flush=True)


if __name__ == "__main__":
    main()
