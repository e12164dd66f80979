"""Short prompts: each stage of chunk_kda alone (CUDA-graph medians, us), softplus gate in kernel."""
import sys
from pathlib import Path
import torch
sys.path.insert(0, str(Path.cwd() / "benchmarks"))
import bench_kda_prefill as bench

for B, T, lens in ((1, 16, None), (1, 64, None), (1, 256, None), (1, 1024, None), (1, 512, [64] * 8)):
    c = bench.make_case(B, T, "gate", lens=lens)
    N = len(lens) if lens else B
    ht = torch.empty(N, bench.HV, bench.K, bench.V, device="cuda")
    out = torch.empty_like(c["v"])
    whole = bench.ours_fn(c, ht, out)
    whole()
    t = {s: bench.bench_graph(bench.ours_fn(c, ht, out, stage=s), 20) * 1e3 for s in ("intra", "state")}
    tw = bench.bench_graph(whole, 20) * 1e3
    empty = torch.zeros(1, device="cuda")
    te = bench.bench_graph(lambda: empty.add_(1), 20) * 1e3
    print(f"B{B} T{T} lens {lens}: whole {tw:.1f} us, stage 1 {t['intra']:.1f}, state {t['state']:.1f}; "
          f"graph of one add_ {te:.1f}", flush=True)
