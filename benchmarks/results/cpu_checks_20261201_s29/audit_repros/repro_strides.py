import os; os.environ["TRITON_INTERPRET"] = "1"   # CPU: kernels via interpreter (same launcher as GPU)
import torch, kimiops
torch.manual_seed(0); H, K, V, N = 2, 16, 16, 3
q, k, v = torch.randn(N,1,H,K), torch.randn(N,1,H,K), torch.randn(N,1,H,V)
g, b = -torch.rand(N,1,H,K), torch.rand(N,1,H)
table = torch.tensor([[5,1],[2,6],[7,3]], dtype=torch.int32)   # e.g. an [N, T_max] slot table
pool0 = torch.randn(8,H,V,K)
for be in ("torch", "triton"):
    for idx in (table[:,0].contiguous(), table[:,0]):          # same values [5,2,7]; stride 1 vs 2
        p = pool0.clone()
        kimiops.fused_recurrent_kda(q,k,v,g,b, initial_state=p, ssm_state_indices=idx, state_v_first=True, backend=be)
        print(be, "stride", idx.stride(), "slots written", [i for i in range(8) if not torch.equal(p[i], pool0[i])])
