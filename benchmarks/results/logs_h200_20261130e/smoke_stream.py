"""GPU smoke test of the streamed prefill (B1 T8192, H=HV=32, K=V=128, bf16): eager and graph bits
against one part at the same state tiling; exits nonzero on mismatch."""
import sys, time, torch
sys.path.insert(0, "tests/kda")
from kimiops.kda.kernels import chunk as cm
from kimiops.kda.kernels.chunk_state import STATE_CONFIG_WIDE
t0 = time.time()
torch.manual_seed(0)
B, T, H, K = 1, 8192, 32, 128
q = torch.randn(B, T, H, K, device="cuda", dtype=torch.bfloat16)
k = torch.randn_like(q); v = torch.randn_like(q)
g = -torch.rand(B, T, H, K, device="cuda").mul(0.1).to(torch.bfloat16)
beta = torch.rand(B, T, H, device="cuda", dtype=torch.bfloat16)
ht = torch.empty(1, H, K, K, device="cuda")
def call(cfg, out):
    return cm.chunk_kda_fwd(q, k, v, g, beta, scale=K**-0.5, cu_seqlens=None, h0=None, h0_indices=None, ht=ht,
                            ht_indices=None, state_v_first=True, use_qk_l2norm=True, use_beta_sigmoid=False,
                            gate="none", A_log=None, dt_bias=None, lower_bound=None, out=out,
                            state_config=STATE_CONFIG_WIDE, pipeline_config=cfg)
ref = torch.empty_like(v); call({"max_parts": 1}, ref); torch.cuda.synchronize(); ref_ht = ht.clone()
print(f"one part done {time.time()-t0:.1f}s", flush=True)
out = torch.empty_like(v)
for i in range(3):
    call(None, out); torch.cuda.synchronize()
    print(f"eager {i}: equal {torch.equal(out, ref)} {torch.equal(ht, ref_ht)} {time.time()-t0:.1f}s", flush=True)
    assert torch.equal(out, ref) and torch.equal(ht, ref_ht)
gr = torch.cuda.CUDAGraph()
s = torch.cuda.Stream(); s.wait_stream(torch.cuda.current_stream())
with torch.cuda.graph(gr, stream=s):
    call(None, out)
for i in range(3):
    out.zero_(); gr.replay(); torch.cuda.synchronize()
    print(f"graph {i}: equal {torch.equal(out, ref)} {torch.equal(ht, ref_ht)} {time.time()-t0:.1f}s", flush=True)
    assert torch.equal(out, ref) and torch.equal(ht, ref_ht)
print("SMOKE OK")
