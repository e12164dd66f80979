"""End-to-end error (o, final state) against fp64 on aligned keys with slow decay, in Triton's interpreter (fp32 inputs, default numerics), for the kimiops on the path: TRITON_INTERPRET=1 python3 <this> from the tree's root."""
import os, sys, torch
sys.path.insert(0, os.path.join(os.getcwd(), "tests", "kda"))
import test_chunk_kernel as t
for neg in (False, True):
    for beta_logit in (2.0, 6.0):
        for corr_noise in (0.01, 0.3):
            T, K, V = 70, 32, 32
            gen = torch.Generator().manual_seed(5)
            inp = t.make_inputs(1, T, 1, 1, K, V, "none", torch.float32, "cpu", seed=5, mild=True)
            d = torch.randn(K, generator=gen)
            inp["k"] = (d + corr_noise * torch.randn(1, T, 1, K, generator=gen))
            inp["beta"] = torch.full((1, T, 1), beta_logit)
            inp = t.with_slow_decay(inp, seed=5)
            ht = torch.empty(1, 1, K, V)
            o = t.run(inp, gate="none", scale=K**-0.5, ht=ht, allow_neg_eigval=neg)
            ro, rs = t.reference(inp, gate="none", scale=K**-0.5, allow_neg_eigval=neg)
            print(f"neg_eigval {neg} beta_logit {beta_logit} key noise {corr_noise}: o {t.rel_err(o, ro):.2e} state {t.rel_err(ht, rs):.2e}", flush=True)
