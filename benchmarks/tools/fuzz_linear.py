"""Random ``kimiops.linear`` calls with ``backend="triton"`` (the kernel in Triton's interpreter on CPU
tensors, fp16; with ``--device cuda`` the compiled kernels, bf16 and fp16) against fp64: ragged M
(0-64), N and K, leading dims, bias or none, ``out`` absent / 16-bit / fp32, x rows and weight rows
with strides wider than K (slices of fused buffers).

What it checks per call:
- shape and dtype of the result (``out`` itself when given);
- error against fp64 no larger than 1.5x the cublas backend's (torch's matmul on CPU) on the same inputs (16-bit
  results; 1e-5 relative for an fp32 ``out``, the accumulator rounded once) plus 1e-6;
- determinism: the same call again gives the same bits; on CUDA also the rows in another order and
  the first rows alone (batch invariance). Not on the CPU: the interpreter computes ``tl.dot`` with
  numpy's BLAS (OpenBLAS), whose fp32 products round a row differently by its position in the
  block (20 of 20 row permutations of a [16, 128] x [128, 64] product of fp16 values changed bits
  on the CPU machine), so there it would test OpenBLAS, not the kernel.

    PYTHONPATH=$PWD python3 benchmarks/tools/fuzz_linear.py [--calls 200] [--seed 0] [--device cpu|cuda] [-v]
"""
import argparse
import os
import sys

if __name__ == "__main__" and "cuda" not in sys.argv[1:]:  # before triton is imported
    os.environ["TRITON_INTERPRET"] = "1"

import torch  # noqa: E402

from kimiops.gemm.linear import linear  # noqa: E402
from kimiops.testing import rel_err  # noqa: E402


def one_call(gen: torch.Generator, device: torch.device):
    """A call's description and its failures (empty: none)."""
    pick = lambda xs: xs[int(torch.randint(len(xs), (1,), generator=gen))]  # noqa: E731
    rint = lambda lo, hi: int(torch.randint(lo, hi + 1, (1,), generator=gen))  # noqa: E731
    cuda = device.type == "cuda"
    dtype = pick([torch.bfloat16, torch.float16]) if cuda else torch.float16
    M = pick([0, 1, 2, 3, 4, 5, 8, 13, 16, 31, 32, 64, rint(1, 64)])
    N = rint(1, 2048 if cuda else 320)
    K = rint(1, 4096 if cuda else 700)
    lead = pick([(), (1,), (2,)]) if M % 2 == 0 and M else pick([(), (1,)])
    rows = M // (lead[0] if lead else 1)
    x_pad, w_pad = pick([0, 0, 8, 24]), pick([0, 0, 16])
    x_buf = torch.randn(M, K + x_pad, generator=gen).to(device, dtype)
    w_buf = (torch.randn(N, K + w_pad, generator=gen) / max(K, 1) ** 0.5).to(device, dtype)
    x2 = x_buf[:, :K]
    x = x2.view(*lead, rows, K) if lead else x2
    w = w_buf[:, :K]
    b = torch.randn(N, generator=gen).to(device, dtype) if pick([True, False]) else None
    out_kind = pick(["none", "same", "fp32"])
    desc = (f"M={M} N={N} K={K} {str(dtype)[6:]} lead={lead} x_pad={x_pad} w_pad={w_pad} bias={b is not None} "
            f"out={out_kind}")
    ref = x2.double() @ w.double().t() + (b.double() if b is not None else 0)
    errs = []
    out = None if out_kind == "none" else \
        torch.full((M, N), float("nan"), device=device, dtype=dtype if out_kind == "same" else torch.float32)
    try:
        y = linear(x, w, b, out=out, backend="triton")
    except Exception as exc:  # a valid call must not raise
        return desc, [f"raised {type(exc).__name__}: {exc}"]
    want_shape = (M, N) if out is not None else (*lead, rows, N) if lead else (M, N)
    if out is not None and y is not out:
        errs.append("out given but another tensor returned")
    if tuple(y.shape) != want_shape or y.dtype != (out.dtype if out is not None else dtype):
        return desc, errs + [f"result {tuple(y.shape)} {y.dtype}, expected {want_shape}"]
    if M == 0 or N == 0:
        return desc, errs
    y2 = y.reshape(M, N)
    if out_kind == "fp32":
        limit = 1e-5
    else:
        limit = 1.5 * rel_err(linear(x2, w, b, backend="cublas"), ref) + 1e-6
    e = rel_err(y2, ref)
    if not e <= limit:
        errs.append(f"rel err {e:.2e} > {limit:.2e}")
    again = linear(x2, w, b, out=None if out is None else torch.empty_like(out), backend="triton")
    if not torch.equal(again.reshape(M, N), y2):
        errs.append("a repeated call gave other bits")
    if cuda:
        perm = torch.randperm(M, generator=gen).to(device)
        shuffled = linear(x2[perm], w, b, out=None if out is None else torch.empty_like(out), backend="triton")
        if not torch.equal(shuffled.reshape(M, N), y2[perm]):
            errs.append("rows in another order gave other bits")
        first = rint(1, M)
        alone = linear(x2[:first], w, b, backend="triton")
        if out_kind != "fp32" and not torch.equal(alone, y2[:first]):
            errs.append(f"the first {first} rows alone gave other bits")
    return desc, errs


def fuzz(calls: int, seed: int = 0, *, device="cpu", out=print, verbose: bool = False) -> int:
    """Returns the number of failing calls (each reported through ``out``)."""
    device = torch.device(device)
    failed = 0
    for i in range(calls):
        desc, errs = one_call(torch.Generator().manual_seed(seed * 100003 + i), device)
        if errs:
            failed += 1
            out(f"[{i}] FAIL {desc}: " + "; ".join(errs))
        elif verbose:
            out(f"[{i}] ok   {desc}")
    return failed


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    failed = fuzz(args.calls, args.seed, device=args.device, out=lambda s: print(s, flush=True), verbose=args.verbose)
    print(f"{args.calls} calls, seed {args.seed}, {args.device}: {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
