"""tb of stage 1 against fp64 on the inputs of test_stage1_inverse_exact_for_aligned_keys_and_slow_decay, for the tree whose kimiops is imported (run from that tree's root: PYTHONPATH=<tree> python3 stage1_inverse_aligned_keys.py)."""
import os, sys, torch
os.environ["TRITON_INTERPRET"] = "1"
sys.path.insert(0, os.path.join(os.getcwd(), "tests", "kda"))
import kimiops; print(kimiops.__file__)
import test_chunk_kernel as t
from kimiops.kda.kernels import chunk as chunk_mod
chunk_mod.NUMERICS_CONFIG.update(dot_dtype="fp32", inter_dtype=torch.float32, inv_prec="ieee")
for neg in (False, True):
    T, K = 70, 32
    gen = torch.Generator().manual_seed(5)
    inp = t.make_inputs(1, T, 1, 1, K, 32, "none", torch.float32, "cpu", seed=5, mild=True)
    inp["k"] = (torch.randn(K, generator=gen) + 0.01 * torch.randn(1, T, 1, K, generator=gen))
    inp["beta"] = torch.full((1, T, 1), 6.0)
    inp = t.with_slow_decay(inp, seed=5)
    plan = t.plan_for(inp, gate="none", allow_neg_eigval=neg)
    chunk_mod._launch_intra(plan)
    _, ref_tb, _ = t._stage1_reference(inp, gate="none", scale=0.2, allow_neg_eigval=neg)
    print("neg", neg, "max|tb|", ref_tb.abs().max().item(), "rel err tb", t.rel_err(plan["tb"][:, :plan["NC"]], ref_tb))
