import os, torch, kimiops
os.environ["TRITON_INTERPRET"] = "1"          # set after import
x = torch.randn(2, 16, dtype=torch.float16); w = torch.randn(8, 16, dtype=torch.float16)
kimiops.linear(x, w, backend="triton")
