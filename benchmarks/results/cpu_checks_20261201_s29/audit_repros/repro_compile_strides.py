import os, sys
os.environ["TRITON_INTERPRET"] = "1"
import torch, kimiops
from kimiops.testing import make_kda_inputs
gen = torch.Generator().manual_seed(0)
B, T, H, K, V = 2, 20, 1, 16, 16
x = make_kda_inputs(B, T, H, K, V, generator=gen)
v_perm = x.v.transpose(0, 1).contiguous().transpose(0, 1)   # dense, not contiguous: strides (V*H, B*H*V, V, 1)
print("v strides", v_perm.stride(), "contig", v_perm.is_contiguous())
for op_name in ("chunk_kda", "fused_recurrent_kda"):
    op = getattr(kimiops, op_name)
    for backend in ("torch", "triton"):
        def f(q, k, v, g, b):
            o, _ = op(q, k, v, g, b, backend=backend)
            return o * 2
        eager = f(x.q, x.k, v_perm, x.g, x.beta)
        o_e, _ = op(x.q, x.k, v_perm, x.g, x.beta, backend=backend)
        for cb in ("aot_eager", "inductor"):
            torch._dynamo.reset()
            try:
                comp = torch.compile(f, fullgraph=True, backend=cb)(x.q, x.k, v_perm, x.g, x.beta)
            except Exception as e:
                print(op_name, backend, cb, "RAISED", type(e).__name__, str(e).strip().splitlines()[0][:200]); continue
            print(op_name, backend, cb, "eager o strides", o_e.stride(), "match:", torch.allclose(comp, eager, atol=1e-5), f"maxdiff {(comp-eager).abs().max().item():.3g}")
