"""Fifty-seventh session: the decode kernel's shared-memory stores of butterfly-reduced values (offline sm_90,
``tests/kda/decode_reduction_ptx.reduction_stores``) over input dtypes, head dims (K, V), both state layouts and
the launch forms (batch mode at N = 1 / 8 / 64, ``cu_seqlens`` with 4 tokens per sequence), from a pool and
from no initial state. The fifty-sixth
session's scan and test drew bf16 only; the GPU's racecheck found a race in an fp32 call (K = V = 32,
V-first, ``cu_seqlens``: ``logs_20261206_s57/run4/ops_racecheck.log``). Prints, per compiled variant,
``[stores, fused]`` and, for each FMA fed by a shuffle in a stored reduction, the source line it comes from.

    [HEADS=32] PYTHONPATH=$PWD python3 benchmarks/results/cpu_checks_20261206_s57/scripts/decode_dtype_scan.py [dims ...]

With HEADS (default 4) of 32 or more only K = V is drawn, and batch mode at N = 2, 4 and 256 too."""
import collections
import os
import re
import sys

import torch

import kimiops
from kimiops.launch import compiling_in_background
from kimiops.testing import offline_sm90

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "../../../../tests/kda"))
from decode_reduction_ptx import _INSTR, reduction_stores  # noqa: E402


def fused_lines(ptx: str) -> collections.Counter:
    """Source lines (recurrent.py:N) of the FMAs fed by a shuffle whose result chain reaches a shared store."""
    line, defs, out = None, {}, collections.Counter()
    for text in ptx.splitlines():
        if re.match(r"\s*\.loc\s", text):  # the kernel's own line: the last recurrent.py:N of the inline chain
            lines = re.findall(r"recurrent\.py:(\d+)", text)
            line = f"recurrent.py:{lines[-1]}" if lines else line
            continue
        m = _INSTR.match(text)
        if m:
            regs = re.findall(r"%r\d+", m.group(3))
            if regs:
                defs[regs[0]] = (m.group(2), regs[1:], line)
    for reg, (op, srcs, where) in defs.items():
        if op.startswith("fma") and any(defs.get(s, ("",))[0].startswith("shfl.sync.bfly") for s in srcs):
            out[where] += 1
    return out


def compile_call(call):
    with compiling_in_background(1) as mode:
        call()
    return [fk.future.result() for fk in mode.future_kernels.values()]


def main():
    offline_sm90()
    dims = [int(a) for a in sys.argv[1:]] or [16, 32, 64, 128, 256]
    H = int(os.environ.get("HEADS", "4"))  # 32 heads reach the multi-warp tile configs at N = 64 and more
    forms = (("batch", 1, 1), ("batch", 8, 1), ("batch", 64, 1), ("cu_seqlens", 3, 4))
    if H >= 32:  # N = 2 and 4 take the batch table's 4- and 2-warp configs
        forms += (("batch", 2, 1), ("batch", 4, 1), ("batch", 256, 1))
    for dtype in (torch.bfloat16, torch.float16, torch.float32):
        for K in dims:
            for V in (dims if H < 32 else [K]):
                for v_first, state in ((v, s) for v in (False, True) for s in ("pool", "none")):
                    for form, N, T in forms:
                        q = torch.randn(N if form == "batch" else 1, T * (1 if form == "batch" else N), H, K, dtype=dtype)
                        v = torch.randn(*q.shape[:3], V, dtype=dtype)
                        beta = torch.randn(*q.shape[:3], dtype=dtype)
                        shape = (V, K) if v_first else (K, V)
                        kw = dict(use_qk_l2norm_in_kernel=True, use_gate_in_kernel=True, use_beta_sigmoid_in_kernel=True,
                                  A_log=torch.zeros(H), dt_bias=torch.zeros(H * K), state_v_first=v_first,
                                  initial_state=torch.zeros(N, H, *shape), ssm_state_indices=torch.arange(N, dtype=torch.int32))
                        if state == "none":
                            del kw["initial_state"], kw["ssm_state_indices"]
                        if form == "cu_seqlens":
                            kw["cu_seqlens"] = torch.arange(0, N * T + 1, T)
                        for k in compile_call(lambda: kimiops.fused_recurrent_kda(q, q, v, q, beta, **kw)):
                            ptx = k.asm["ptx"]
                            stores, fused = reduction_stores(ptx)
                            extra = dict(fused_lines(ptx)) if fused else ""
                            print(f"{str(dtype)[6:]:8s} K {K:3d} V {V:3d} v_first {int(v_first)} {form:10s} N {N:2d} "
                                  f"{state:4s} warps {k.metadata.num_warps}: [{stores}, {fused}] {extra}", flush=True)


if __name__ == "__main__":
    main()
