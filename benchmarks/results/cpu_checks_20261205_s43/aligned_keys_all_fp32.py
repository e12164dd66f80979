import os, sys
os.environ["TRITON_INTERPRET"] = "1"
import torch
sys.path.insert(0, os.path.join(os.getcwd(), "benchmarks", "tools"))
import prefill_aligned_keys_accuracy as pa
from kimiops.kda.kernels import chunk as chunk_mod
from kimiops.testing import rel_err
import kimiops
chunk_mod.NUMERICS_CONFIG.update(inter_dtype=torch.float32, dot_dtype="fp32", inv_prec="ieee")
inp = pa.aligned_inputs(0.01, 6.0)
ro, rs = pa.tck.reference(inp, gate="none", scale=pa.K ** -0.5)
ht = torch.empty(1, pa.H, pa.K, pa.V)
o = pa.tck.run(inp, gate="none", scale=pa.K ** -0.5, ht=ht)
print(f"all fp32 (WS32 {os.environ.get('PROBE_WS32')}, KV32 {os.environ.get('PROBE_KV32')}): o {rel_err(o, ro):.2e} state {rel_err(ht, rs):.2e}", flush=True)
o2, ht2 = pa.call(kimiops.chunk_kda, inp, False, backend="torch")
print(f"torch path: o {rel_err(o2, ro):.2e} state {rel_err(ht2, rs):.2e}", flush=True)
print(f"triton vs torch path: o {rel_err(o, o2.double()):.2e} state {rel_err(ht, ht2.double()):.2e}", flush=True)
