# chunk_kda(backend="triton"): the query scale goes through fp16 scratch -> underflow / overflow
import os
os.environ["TRITON_INTERPRET"] = "1"
import torch, kimiops
from kimiops.kda.reference import naive_recurrent_kda
from kimiops.kda.gate import l2norm
from kimiops.testing import rel_err

torch.manual_seed(0)
B, T, H, HV, K, V = 1, 32, 1, 1, 16, 16
q, k, v = torch.randn(B, T, H, K), torch.randn(B, T, H, K), torch.randn(B, T, HV, V)
g = -torch.rand(B, T, HV, K) * 0.1
b = torch.rand(B, T, HV)
for scale in (1e-5, 1e-6, 1e-8, 2e5):
    ro, _ = naive_recurrent_kda(l2norm(q.double()), l2norm(k.double()), v.double(), g.double(), b.double(), scale=scale)
    for be in ("triton", "torch"):
        o, _ = kimiops.chunk_kda(q, k, v, g, b, scale=scale, use_qk_l2norm_in_kernel=True, backend=be)
        print(f"scale={scale:g} {be:6s}: rel err o {rel_err(o, ro):.2e}, non-finite {int((~o.isfinite()).sum())}")
    o, _ = kimiops.fused_recurrent_kda(q, k, v, g, b, scale=scale, use_qk_l2norm_in_kernel=True, backend="triton")
    print(f"scale={scale:g} decode: rel err o {rel_err(o, ro):.2e}")
