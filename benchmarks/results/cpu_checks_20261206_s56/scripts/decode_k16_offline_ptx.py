"""Fifty-sixth session: the decode kernel of run 13's call 2 (K = V = 16, fp16, B = 1, T = 3, K-first state) compiled
for sm_90 offline (driver stubbed); writes its PTX and TTGIR to /tmp/s56/call2.*."""
import os, sys, pathlib, torch, triton
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[4]))
os.makedirs('/tmp/s56', exist_ok=True)
from triton.backends.compiler import GPUTarget
import kimiops
from kimiops.kda import runner
from kimiops.kda.kernels import chunk, recurrent
from kimiops.launch import compiling_in_background
class Sm90Offline:
    def get_current_target(self): return GPUTarget("cuda", 90, 32)
    def get_current_device(self): return 0
    def get_current_stream(self, device=None): return 0
triton.runtime.driver.set_active(Sm90Offline())
torch._C._cuda_getDevice = lambda: 0
chunk.supports_pdl = recurrent.supports_pdl = lambda device: True
runner.kda_backend = lambda *a, **k: "triton"
B, T, H, HV, K, V = 1, 3, 1, 1, 16, 16
q = torch.randn(B, T, H, K, dtype=torch.float16); k = torch.randn_like(q)
v = torch.randn(B, T, HV, V, dtype=torch.float16); g = torch.randn(B, T, HV, K)
beta = torch.randn(B, T, HV, dtype=torch.float16)
with compiling_in_background(1) as mode:
    kimiops.fused_recurrent_kda(q, k, v, g, beta, initial_state=torch.randn(B, HV, K, V), output_final_state=True,
        use_gate_in_kernel=True, use_beta_sigmoid_in_kernel=True, A_log=torch.zeros(HV, dtype=torch.float16),
        lower_bound=-3.88, scale=0.55, backend="triton")
for key, fk in mode.future_kernels.items():
    kk = fk.future.result()
    print(kk.name, kk.metadata.num_warps)
    open('/tmp/s56/call2.ptx', 'w').write(kk.asm['ptx'])
    open('/tmp/s56/call2.ttgir', 'w').write(kk.asm['ttgir'])
