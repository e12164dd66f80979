"""PDL order A/B for several tokens per request: vLLM's speculative decode (fused_recurrent_kda with
ssm_state_indices [N, 4] and num_accepted_tokens, the cu_seqlens table) and SGLang's target verify
(KDABackend.target_verify, fp32 buffer), with the table's config and wait_first forced off (R) or on
(W) through recurrent.config_for; kimiops.empty_cache() between the two so no eager launch recorded
under the other order is reused. Also the packed N = 2 cu_seqlens step (8x2) for reference.
CUDA-graph medians of 20 chained calls, best of 3 interleaved rounds.

    PYTHONPATH=$PWD:$PWD/benchmarks python3 spec_order.py
"""
import torch

import bench_kda_decode as bench
import kimiops
from kimiops.bench.timing import graph_us
from kimiops.kda.kernels import recurrent as rec

table = rec.config_for


def forced(wait_first):
    return lambda nh, varlen: table(nh, varlen)._replace(wait_first=wait_first)


gen = torch.Generator(device="cuda").manual_seed(0)
NS = (1, 2, 4, 8, 16, 64)
pool = torch.randn(2 * bench.SPEC_TOKENS * max(NS) + 8, bench.HV, bench.V, bench.K, device="cuda", generator=gen) * 0.1
print(torch.cuda.get_device_name(), torch.__version__, flush=True)
for N in NS:
    spec = bench.SpecCase(N, pool, gen)
    ver = bench.VerifyCase(N, pool, gen)
    fns = {"spec": spec.ours(), "verify": ver.verify()}
    best = {}
    for _ in range(3):
        for order in ("R", "W"):
            rec.config_for = forced(order == "W")
            kimiops.empty_cache()
            for name, fn in fns.items():
                us = graph_us([fn] * bench.GRAPH_CALLS)
                best[(name, order)] = min(best.get((name, order), us), us)
    rec.config_for = table
    kimiops.empty_cache()
    cfg = table(N * bench.HV, True)
    print(f"N={N} ({cfg.block_v}x{cfg.num_warps}{'h' if cfg.stream_hints else ''}): " + "  ".join(
        f"{name} R {best[(name, 'R')]:.2f} W {best[(name, 'W')]:.2f}" for name in fns), flush=True)
