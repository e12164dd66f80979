import torch, kimiops
kda = kimiops.KDABackend(2, 16, 16, backend="torch")
T=5
q=torch.randn(T+2,2,16); k=torch.randn(T+2,2,16); v=torch.randn(T+2,2,16); g=-torch.rand(T+2,2,16); b=torch.randn(T+2,2)
pool=torch.zeros(6,2,16,16)
try:
    o = kda.decode(q,k,v,g,b, ssm_states=pool, cache_indices=torch.tensor([1,2],dtype=torch.int32), query_start_loc=torch.tensor([0,2,5],dtype=torch.int32))
    print("ok", o.shape)
except Exception as e:
    print("ERR", type(e).__name__, e)
