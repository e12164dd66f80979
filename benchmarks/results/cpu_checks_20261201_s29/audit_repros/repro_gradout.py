import os
os.environ["TRITON_INTERPRET"] = "1"
import torch, kimiops
torch.manual_seed(0)
x = torch.randn(3, 24, dtype=torch.float16)
w = torch.randn(8, 24, dtype=torch.float16, requires_grad=True)   # a parameter
ref = x.double() @ w.detach().double().t()
o1 = torch.empty(3, 8)                       # fp32 out
kimiops.linear(x, w, out=o1, backend="triton")          # grad enabled (default)
with torch.no_grad():
    o2 = torch.empty(3, 8); kimiops.linear(x, w, out=o2, backend="triton")
print("grad on : err", (o1.detach().double() - ref).abs().max().item(), "| out == fp16-rounded:", torch.equal(o1.detach(), o1.detach().half().float()), "| out.grad_fn:", o1.grad_fn)
print("no_grad : err", (o2.double() - ref).abs().max().item())
