# chunk_kda(backend="torch"): huge decays then mild ones inside one 64-token chunk (fp32 cumsum)
import os
os.environ["TRITON_INTERPRET"] = "1"
import torch, kimiops
from kimiops.kda.reference import naive_recurrent_kda
from kimiops.kda.gate import l2norm
from kimiops.testing import rel_err

torch.manual_seed(0)
B, T, H, HV, K, V = 1, 64, 1, 1, 16, 16
q, k = l2norm(torch.randn(B, T, H, K)), l2norm(torch.randn(B, T, H, K))
v, b = torch.randn(B, T, HV, V), torch.rand(B, T, HV) * 0.5
g = torch.full((B, T, HV, K), -0.005)
g[:, :56] = -3000.0
ro, rs = naive_recurrent_kda(q.double(), k.double(), v.double(), g.double(), b.double(), output_final_state=True)
for be in ("triton", "torch"):
    o, s = kimiops.chunk_kda(q, k, v, g, b, output_final_state=True, backend=be)
    print(f"{be:6s}: rel err o {rel_err(o, ro):.2e}  state {rel_err(s, rs):.2e}")
