"""Which of stage 1's precision knobs (NUMERICS_CONFIG) carries the error on the bf16 aligned-keys case of
benchmarks/tools/prefill_aligned_keys_accuracy.py (interpreter, no truncation emulation), for the kimiops on the path:
PYTHONPATH=<tree> python3 <this> from the repository root (a tree with that tool)."""
import os, sys
os.environ["TRITON_INTERPRET"] = "1"
import torch
sys.path.insert(0, os.path.join(os.getcwd(), "benchmarks", "tools"))
import prefill_aligned_keys_accuracy as pa
import kimiops
from kimiops.kda.kernels import chunk as chunk_mod
from kimiops.testing import rel_err
variants = {"default": {}, "inter fp32": {"inter_dtype": torch.float32}, "dot fp32": {"dot_dtype": "fp32"},
            "inter+dot fp32": {"inter_dtype": torch.float32, "dot_dtype": "fp32"}}
for neg, logit in ((False, 6.0), (True, 6.0)):
    inp = pa.aligned_inputs(0.01, logit)
    ro, rs = pa.tck.reference(inp, gate="none", scale=pa.K ** -0.5, allow_neg_eigval=neg)
    for name, cfg in variants.items():
        saved = dict(chunk_mod.NUMERICS_CONFIG)
        chunk_mod.NUMERICS_CONFIG.update(cfg)
        o, ht = pa.call(kimiops.chunk_kda, inp, neg, backend="triton")
        chunk_mod.NUMERICS_CONFIG.clear(); chunk_mod.NUMERICS_CONFIG.update(saved)
        print(f"allow_neg_eigval {neg} beta_logit {logit} noise 0.01, {name}: o {rel_err(o, ro):.2e} state {rel_err(ht, rs):.2e}", flush=True)
