import os, torch, kimiops
os.environ["KIMIOPS_BF16_GEMM_BACKEND"] = "tritn"
kimiops.linear(torch.randn(2, 16, dtype=torch.float16), torch.randn(8, 16, dtype=torch.float16))
