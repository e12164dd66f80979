import os; os.environ["TRITON_INTERPRET"] = "1"
import torch, kimiops
torch.manual_seed(0); T, H, K, V = 16, 2, 16, 16
q, k, v = torch.randn(1,T,H,K), torch.randn(1,T,H,K), torch.randn(1,T,H,V)
g, b = -torch.rand(1,T,H,K), torch.rand(1,T,H)
h0 = torch.randn(1,H,K,V)
h0_view = h0.transpose(-1,-2).contiguous().transpose(-1,-2)   # equal values, strides (512,256,1,16)
for be in ("torch", "triton"):
    (o1,s1),(o2,s2) = [kimiops.chunk_kda(q,k,v,g,b, initial_state=x, output_final_state=True, backend=be) for x in (h0,h0_view)]
    print(be, "max |o diff|", (o1-o2).abs().max().item(), "max |state diff|", (s1-s2).abs().max().item())
