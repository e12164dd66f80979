"""Run chunked KDA prefill a few times on one shape, for a profiler (ncu / nsys) to attach to.

    ncu -k regex:chunk_intra -c 1 --section WarpStateStats python benchmarks/profile_kda_prefill.py

H = HV = 32, K = V = 128, bf16, precomputed log-decay gate (``--gate``: the softplus gate in the
kernel, Kimi-like parameters); ``--batch``/``--seq-len`` pick the shape.
"""

from __future__ import annotations

import argparse

import torch

import kimiops


def prefill_call(batch: int, seq_len: int, gate: bool = False, parts: int = 0):
    """A zero-argument callable that runs one ``chunk_kda`` call on fixed random inputs of
    ``[batch, seq_len, 32, 128]``; ``parts`` > 0 forces that many pipelined parts (process-wide)."""
    B, T, H, D = batch, seq_len, 32, 128
    torch.manual_seed(0)
    q, k, v = (torch.randn(B, T, H, D, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    g = torch.nn.functional.logsigmoid(torch.randn(B, T, H, D, device="cuda") + 3)
    beta = torch.rand(B, T, H, device="cuda", dtype=torch.bfloat16)
    if parts:
        from kimiops.kda.kernels import chunk

        chunk.PIPELINE_CONFIG.update(min_parts=parts, max_parts=parts, min_part_slots=1, below_pairs=1 << 30,
                                     max_seqs=1 << 30)
    kw = {}
    if gate:
        g = torch.randn(B, T, H, D, device="cuda", dtype=torch.bfloat16)
        kw = dict(use_gate_in_kernel=True, A_log=torch.log(torch.rand(H, device="cuda") * 15 + 1),
                  dt_bias=torch.zeros(H * D, device="cuda"))
    return lambda: kimiops.chunk_kda(q, k, v, g, beta, use_qk_l2norm_in_kernel=True, output_final_state=True, **kw)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--seq-len", type=int, default=8192)
    ap.add_argument("--calls", type=int, default=3)
    ap.add_argument("--parts", type=int, default=0, help="pipelined parts (0: the launcher's choice)")
    ap.add_argument("--gate", action="store_true", help="raw gate logits, softplus gate in the kernel")
    args = ap.parse_args()
    call = prefill_call(args.batch, args.seq_len, args.gate, args.parts)
    for _ in range(args.calls):
        call()
    torch.cuda.synchronize()


if __name__ == "__main__":
    main()
