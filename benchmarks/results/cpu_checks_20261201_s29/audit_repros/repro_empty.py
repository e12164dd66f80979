import os; os.environ["TRITON_INTERPRET"] = "1"
import torch, kimiops
H, K, V = 2, 16, 16
z = lambda *s: torch.zeros(*s)
pool = torch.zeros(4, H, V, K)
for name, f in [
  ("chunk_kda triton T=0", lambda: kimiops.chunk_kda(z(1,0,H,K), z(1,0,H,K), z(1,0,H,V), z(1,0,H,K), z(1,0,H), backend="triton")),
  ("extend triton, 2 empty requests", lambda: kimiops.KDABackend(H,K,V,backend="triton").extend(z(0,H,K), z(0,H,K), z(0,H,V), z(0,H,K), z(0,H),
      ssm_states=pool, cache_indices=torch.tensor([0,1],dtype=torch.int32), query_start_loc=torch.zeros(3,dtype=torch.int32))),
  ("decode torch, N=0", lambda: kimiops.KDABackend(H,K,V,backend="torch").decode(z(0,H,K), z(0,H,K), z(0,H,V), z(0,H,K), z(0,H),
      ssm_states=pool, cache_indices=torch.zeros(0,dtype=torch.int32))),
  ("chunk_kda torch B=0 final state", lambda: kimiops.chunk_kda(z(0,4,H,K), z(0,4,H,K), z(0,4,H,V), z(0,4,H,K), z(0,4,H), output_final_state=True, backend="torch")[1].shape),
]:
    try: r = f(); print("OK ", name, r if isinstance(r, torch.Size) else "")
    except Exception as e: print("ERR", name, type(e).__name__, e)
