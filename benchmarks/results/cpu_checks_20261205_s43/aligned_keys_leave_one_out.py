"""Leave-one-out over the precision of the bf16 aligned-keys case at beta ~1 (key noise 0.01, beta logit 6;
benchmarks/tools/prefill_aligned_keys_accuracy.py inputs): every knob at fp32 (scratch inter_dtype, score operands
dot_dtype, inverse inv_prec "ieee", and with aligned_keys_state_probe.patch applied PROBE_WS32=1 / PROBE_KV32=1: the state
stage's S w and v' kg products in fp32), then all but the one named (argv[1]: inter_dtype, dot_dtype, inv_prec, or ws32 /
kv32 by leaving that variable out of the environment). Interpreter; run from the root of the patched copy."""
import os, sys
os.environ["TRITON_INTERPRET"] = "1"
import torch
sys.path.insert(0, os.path.join(os.getcwd(), "benchmarks", "tools"))
import prefill_aligned_keys_accuracy as pa
from kimiops.kda.kernels import chunk as chunk_mod
from kimiops.testing import rel_err
cfg = dict(inter_dtype=torch.float32, dot_dtype="fp32", inv_prec="ieee")
drop = sys.argv[1]
default = {"inter_dtype": torch.float16, "dot_dtype": "fp16", "inv_prec": "tf32"}
if drop in cfg:
    cfg[drop] = default[drop]
chunk_mod.NUMERICS_CONFIG.update(cfg)
inp = pa.aligned_inputs(0.01, 6.0)
ro, rs = pa.tck.reference(inp, gate="none", scale=pa.K ** -0.5)
ht = torch.empty(1, pa.H, pa.K, pa.V)
o = pa.tck.run(inp, gate="none", scale=pa.K ** -0.5, ht=ht)
print(f"all fp32 but {drop} (WS32 {os.environ.get('PROBE_WS32')}, KV32 {os.environ.get('PROBE_KV32')}): o {rel_err(o, ro):.2e} state {rel_err(ht, rs):.2e}", flush=True)
