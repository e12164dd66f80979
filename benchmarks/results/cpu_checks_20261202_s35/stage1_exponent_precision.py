"""Stage 1 (interpreter) against fp64 with fp32 score operands and scratch and an ieee inverse: A_qk, tb, gC errors
(the figures behind test_stage1_exponents_carry_fp32_precision). Run from the repository root."""
import sys, os, torch
os.environ["TRITON_INTERPRET"]="1"
sys.path.insert(0, "tests/kda")
import test_chunk_kernel as t
from kimiops.kda.kernels import chunk as chunk_mod
from kimiops.testing import rel_err
chunk_mod.NUMERICS_CONFIG.update(dot_dtype="fp32", inter_dtype=torch.float32, inv_prec="ieee")
for gate, mild in (("none", True), ("softplus", True), ("softplus", False)):
    inp = t.make_inputs(1, 70, 1, 2, 32, 32, gate, torch.float32, torch.device("cpu"), seed=3, mild=mild)
    plan = t.plan_for(inp, gate=gate)
    chunk_mod._launch_intra(plan)
    a, tb, gc = t._stage1_reference(inp, gate=gate, scale=0.2)
    nc = plan["NC"]
    print(gate, mild, f"aqk {rel_err(plan['aqk'][:, :nc], a):.2e} tb {rel_err(plan['tb'][:, :nc], tb):.2e} gc {rel_err(plan['gc'][:, :nc], gc):.2e}")
