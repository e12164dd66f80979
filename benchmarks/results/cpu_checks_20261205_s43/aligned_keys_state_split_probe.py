"""Does the state stage's single fp16 product S^T w^T (``split_ws`` off: S's fp16 high half only, 11
bits) carry the error of the bf16 aligned-keys case (benchmarks/tools/prefill_aligned_keys_accuracy.py,
key noise 0.01, beta logit 6)? The launcher (``test_chunk_kernel.run``) with the wide state config as
it is and with ``split_ws`` (hi and lo halves, ~22 bits), also with fp32 score operands; Triton's
interpreter, no truncation emulation: PYTHONPATH=<tree> python3 <this> from the repository root."""
import os
import sys

os.environ["TRITON_INTERPRET"] = "1"
import torch  # noqa: E402

sys.path.insert(0, os.path.join(os.getcwd(), "benchmarks", "tools"))
import prefill_aligned_keys_accuracy as pa  # noqa: E402
from kimiops.kda.kernels import chunk as chunk_mod  # noqa: E402
from kimiops.kda.kernels.chunk_state import STATE_CONFIG_WIDE  # noqa: E402
from kimiops.testing import rel_err  # noqa: E402

for neg in (False, True):
    inp = pa.aligned_inputs(0.01, 6.0)
    ro, rs = pa.tck.reference(inp, gate="none", scale=pa.K ** -0.5, allow_neg_eigval=neg)
    for name, split_ws, dot in (("default", False, "fp16"), ("split_ws", True, "fp16"), ("split_ws + dot fp32", True, "fp32")):
        saved = dict(chunk_mod.NUMERICS_CONFIG)
        chunk_mod.NUMERICS_CONFIG["dot_dtype"] = dot
        ht = torch.empty(1, pa.H, pa.K, pa.V)
        o = pa.tck.run(inp, gate="none", scale=pa.K ** -0.5, ht=ht, allow_neg_eigval=neg,
                       state_config=dict(STATE_CONFIG_WIDE, split_ws=split_ws))
        chunk_mod.NUMERICS_CONFIG.clear()
        chunk_mod.NUMERICS_CONFIG.update(saved)
        print(f"allow_neg_eigval {neg} beta_logit 6.0 key noise 0.01, {name}: o {rel_err(o, ro):.2e} "
              f"state {rel_err(ht, rs):.2e}", flush=True)
