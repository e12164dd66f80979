import os
os.environ["TRITON_INTERPRET"] = "1"
import torch, kimiops
from kimiops.testing import make_kda_inputs, rel_err
NAN = float("nan")
def bits(t): return t.contiguous().view(torch.int32)
