"""Probes of aligned_keys_ruled_out.log (run from the repository root, PYTHONPATH=<tree>; the state probes on a copy
patched with aligned_keys_state_probe.patch, with PROBE_WS32=1 or PROBE_KV32=1 in the environment)."""
import os
import sys

os.environ["TRITON_INTERPRET"] = "1"
import torch  # noqa: E402

sys.path.insert(0, os.path.join(os.getcwd(), "benchmarks", "tools"))
import prefill_aligned_keys_accuracy as pa  # noqa: E402
from kimiops.kda.kernels import chunk as chunk_mod  # noqa: E402
from kimiops.testing import rel_err  # noqa: E402

VARIANTS = {"default": ({}, None), "inv_prec ieee": ({"inv_prec": "ieee"}, None),
            "no segments": ({}, {"segment_max_pairs": 0})}
for neg in (False, True):
    inp = pa.aligned_inputs(0.01, 6.0)
    ro, rs = pa.tck.reference(inp, gate="none", scale=pa.K ** -0.5, allow_neg_eigval=neg)
    for name, (numerics, pc) in VARIANTS.items():
        saved = dict(chunk_mod.NUMERICS_CONFIG)
        chunk_mod.NUMERICS_CONFIG.update(numerics)
        ht = torch.empty(1, pa.H, pa.K, pa.V)
        o = pa.tck.run(inp, gate="none", scale=pa.K ** -0.5, ht=ht, allow_neg_eigval=neg, pipeline_config=pc)
        chunk_mod.NUMERICS_CONFIG.clear()
        chunk_mod.NUMERICS_CONFIG.update(saved)
        print(f"allow_neg_eigval {neg}, {name} (PROBE_WS32={os.environ.get('PROBE_WS32')}, "
              f"PROBE_KV32={os.environ.get('PROBE_KV32')}): o {rel_err(o, ro):.2e} state {rel_err(ht, rs):.2e}", flush=True)
