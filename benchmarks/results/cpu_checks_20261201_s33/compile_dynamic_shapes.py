"""torch.compile(fullgraph=True, dynamic=True) of chunk_kda and fused_recurrent_kda on CPU tensors, aot_eager and inductor,
three (T, N) shapes: max abs difference of o and of the pool against eager. From the repo root with PYTHONPATH=$PWD."""
import torch, kimiops
from kimiops.testing import make_kda_inputs
torch._dynamo.config.cache_size_limit = 64
for op, idx_name, name in [(kimiops.chunk_kda, "initial_state_indices", "chunk"), (kimiops.fused_recurrent_kda, "ssm_state_indices", "recurrent")]:
    def f(q, k, v, g, beta, pool, idx, cu):
        o, ht = op(q, k, v, g, beta, initial_state=pool, cu_seqlens=cu, output_final_state=False, **{idx_name: idx})
        return o * 2
    for backend in ("aot_eager", "inductor"):
        torch._dynamo.reset()
        compiled = torch.compile(f, fullgraph=True, backend=backend, dynamic=True)
        for T, N in ((9, 1), (17, 2), (33, 3)):
            x = make_kda_inputs(1, T, 1, 16, 16)
            pool = torch.randn(4, 1, 16, 16)
            idx = torch.arange(N, dtype=torch.int32)
            cu = torch.tensor([0] + sorted(torch.randint(0, T, (N-1,)).tolist()) + [T], dtype=torch.int32)
            p1, p2 = pool.clone(), pool.clone()
            try:
                oe = f(x.q, x.k, x.v, x.g, x.beta, p1, idx, cu)
                oc = compiled(x.q, x.k, x.v, x.g, x.beta, p2, idx, cu)
                print(name, backend, T, N, "ok", (oe-oc).abs().max().item(), (p1-p2).abs().max().item())
            except Exception as e:
                print(name, backend, T, N, "FAIL", type(e).__name__, str(e)[:300])
