"""The same launcher on two neighbours of the aligned-keys case: random keys (noise 100x the direction)
with the slow decay, and aligned keys with a decay of 0.1 per step (interpreter; PYTHONPATH=<tree> python3 <this>
from the repository root)."""
import os, sys
os.environ["TRITON_INTERPRET"] = "1"
import torch
sys.path.insert(0, os.path.join(os.getcwd(), "benchmarks", "tools"))
import prefill_aligned_keys_accuracy as pa
from kimiops.testing import rel_err
for label, noise, gval in (("random keys, slow decay", 100.0, None), ("aligned keys, decay 0.1/step", 0.01, -0.1)):
    inp = pa.aligned_inputs(noise, 6.0)
    if gval is not None:
        inp["g"] = torch.full_like(inp["g"], gval)
    ro, rs = pa.tck.reference(inp, gate="none", scale=pa.K ** -0.5)
    ht = torch.empty(1, pa.H, pa.K, pa.V)
    o = pa.tck.run(inp, gate="none", scale=pa.K ** -0.5, ht=ht)
    print(f"{label}, beta logit 6: o {rel_err(o, ro):.2e} state {rel_err(ht, rs):.2e}", flush=True)
