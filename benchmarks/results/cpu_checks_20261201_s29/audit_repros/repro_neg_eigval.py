# chunk_kda(backend="triton") with allow_neg_eigval=True (beta -> 2) and a repeated key: error > 1e-2
import os
os.environ["TRITON_INTERPRET"] = "1"
import torch, kimiops
from kimiops.kda.reference import naive_recurrent_kda
from kimiops.kda.gate import l2norm
from kimiops.testing import rel_err

torch.manual_seed(5)
B, T, H, HV, K, V = 1, 64, 1, 1, 16, 16
q = torch.randn(B, T, H, K)
k = torch.randn(1, 1, H, K).expand(B, T, H, K).contiguous()   # the same key at every token
v = torch.randn(B, T, HV, V)
g = torch.zeros(B, T, HV, K)                                   # log decay 0 (no decay)
b = torch.full((B, T, HV), 20.0)                               # logits: beta = 2*sigmoid(20) ~ 2
kw = dict(output_final_state=True, use_qk_l2norm_in_kernel=True, use_beta_sigmoid_in_kernel=True,
          allow_neg_eigval=True)
ro, rs = naive_recurrent_kda(l2norm(q.double()), l2norm(k.double()), v.double(), g.double(),
                             2 * torch.sigmoid(b.double()), output_final_state=True)
for be in ("triton", "torch"):
    o, s = kimiops.chunk_kda(q, k, v, g, b, backend=be, **kw)
    print(f"chunk_kda {be:6s}: rel err o {rel_err(o, ro):.2e}  state {rel_err(s, rs):.2e}")
o, s = kimiops.fused_recurrent_kda(q, k, v, g, b, backend="triton", **kw)
print(f"fused_recurrent_kda triton: rel err o {rel_err(o, ro):.2e}  state {rel_err(s, rs):.2e}")
