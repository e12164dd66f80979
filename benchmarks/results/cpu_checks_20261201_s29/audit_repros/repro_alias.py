import os
os.environ["TRITON_INTERPRET"] = "1"
import torch, kimiops
torch.manual_seed(0)
w = torch.randn(128, 128, dtype=torch.float16) / 8
for be in ["cublas", "auto", "triton"]:
    x = torch.randn(2, 128, dtype=torch.float16)
    ref = torch.nn.functional.linear(x.float(), w.float())
    y = kimiops.linear(x, w, out=x, backend=be)     # out aliases x: accepted silently
    print(be, "max abs err:", (y.float() - ref).abs().max().item())
