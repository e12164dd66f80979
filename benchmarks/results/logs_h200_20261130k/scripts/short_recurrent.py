"""Short prompts: chunk_kda vs the recurrent (decode) kernel on the same prefill, CUDA-graph medians (us).
H = HV = 32, K = V = 128, bf16, softplus gate + L2 norm + beta sigmoid in kernel, final state out."""
import sys
from pathlib import Path
import torch
sys.path.insert(0, str(Path.cwd() / "benchmarks"))
import bench_kda_prefill as bench
import kimiops
from kimiops.testing import rel_err

print(torch.cuda.get_device_name())
for B, T, lens in ((1, 16, None), (1, 32, None), (1, 64, None), (1, 128, None), (1, 256, None), (1, 512, None),
                   (4, 64, None), (8, 64, None), (1, 512, [64] * 8), (1, 256, [16, 48, 64, 128]), (32, 64, None)):
    c = bench.make_case(B, T, "gate", lens=lens)
    kw = dict(scale=bench.K**-0.5, output_final_state=True, use_qk_l2norm_in_kernel=True, use_gate_in_kernel=True,
              use_beta_sigmoid_in_kernel=True, A_log=c["A_log"], dt_bias=c["dt_bias"], cu_seqlens=c["cu"])
    args = (c["q"], c["k"], c["v"], c["g"], c["beta"])
    fc = lambda: kimiops.chunk_kda(*args, **kw)
    fr = lambda: kimiops.fused_recurrent_kda(*args, **kw)
    oc, sc = fc()
    orr, sr = fr()
    tc = bench.bench_graph(fc, 20) * 1e3
    tr = bench.bench_graph(fr, 20) * 1e3
    print(f"B{B} T{T} lens {lens}: chunk {tc:7.1f} us, recurrent {tr:7.1f} us ({tc / tr:.2f}x); "
          f"rel diff o {rel_err(orr.double(), oc.double()):.2e}, state {rel_err(sr.double(), sc.double()):.2e}", flush=True)
