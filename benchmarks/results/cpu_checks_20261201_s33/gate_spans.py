"""Fraction of (chunk, head, 16-channel slice) tiles whose in-chunk span of the log decay (max over the
slice of -sum g over the chunk) is at most S, for chunks C of 32 / 16 rows, per gate generator: how often
a data-dependent single-anchor fast path (factors up to e^S) could run. Run from the repo root with
PYTHONPATH=$PWD (CPU, a few seconds)."""
import torch
from kimiops.testing import make_kda_inputs
from kimiops.kda.gate import kda_gate
torch.manual_seed(0)
def frac(g, C, BK, smax):
    # g [T, HV, K]; chunk spans per (chunk, head, slice)
    T, HV, K = g.shape
    s = -g.reshape(T//C, C, HV, K//BK, BK).sum(1)   # [nc, HV, nslice, BK]
    sm = s.amax(-1)
    return (sm <= smax).float().mean().item()
T=4096; HV=32; K=128
cases = {}
# bench g mode
cases['bench g'] = torch.nn.functional.logsigmoid(torch.randn(T,HV,K)+2.0)
gr = torch.randn(T,HV,K); A_log = torch.log(torch.rand(HV)*15+1); dt = torch.randn(HV*K)*0.5
cases['bench gate'] = kda_gate(gr, A_log, dt, None, output_dtype=torch.float32)
for name in ['mild','softplus','lower_bound']:
    x = make_kda_inputs(1, T, HV, K, K, gate=name)
    cases[name] = x.g_decay[0].float() if hasattr(x,'g_decay') else x[5][0].float()
for n, g in cases.items():
    print(n, ' '.join(f"C{C}/BK{BK}/S{s}:{frac(g,C,BK,s):.2f}" for C in (32,16) for BK in (16,) for s in (40,64)))
