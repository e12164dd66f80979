from common import *
HV, K, V = 1, 16, 16
for backend in ("torch", "triton"):
    q = torch.zeros(1, 0, 1, K); v = torch.zeros(1, 0, HV, V); g = torch.zeros(1, 0, HV, K); b = torch.zeros(1, 0, HV)
    pool = torch.randn(3, HV, K, V)
    track = torch.full((2, HV, K, V), NAN)
    cu = torch.tensor([0, 0, 0], dtype=torch.int32)
    o, ht = kimiops.chunk_kda(q, q, v, g, b, initial_state=pool, initial_state_indices=torch.tensor([2, 0], dtype=torch.int32),
                              cu_seqlens=cu, track_state=track, track_chunk_idx=torch.tensor([0, 0], dtype=torch.int32), backend=backend)
    print(backend, "varlen T=0: track row0 == pool[2]?", torch.equal(track[0], pool[2]), "row0 nan?", torch.isnan(track[0]).all().item())
    # same with one non-empty sequence in the call: works
    q1 = torch.randn(1, 3, 1, K); v1 = torch.randn(1, 3, HV, V); g1 = -torch.rand(1, 3, HV, K); b1 = torch.rand(1, 3, HV)
    track = torch.full((2, HV, K, V), NAN)
    kimiops.chunk_kda(q1, q1, v1, g1, b1, initial_state=pool.clone(), initial_state_indices=torch.tensor([2, 0], dtype=torch.int32),
                      cu_seqlens=torch.tensor([0, 0, 3], dtype=torch.int32), track_state=track, track_chunk_idx=torch.tensor([0, 0], dtype=torch.int32), backend=backend)
    print(backend, "varlen T=3 (lengths 0,3): row0 == pool[2]?", torch.equal(track[0], pool[2]), "row1 == pool[0]?", torch.equal(track[1], pool[0]))
    # extend with zero tokens
    be = kimiops.KDABackend(1, K, V, HV, backend=backend)
    pv = torch.randn(3, HV, V, K); track = torch.full((2, HV, V, K), NAN)
    be.extend(torch.zeros(0, 1, K), torch.zeros(0, 1, K), torch.zeros(0, HV, V), torch.zeros(0, HV, K), torch.zeros(0, HV),
              ssm_states=pv, cache_indices=torch.tensor([1, 2], dtype=torch.int32), query_start_loc=cu,
              track_state=track, track_chunk_idx=torch.tensor([0, 0], dtype=torch.int32))
    print(backend, "extend T=0: row0 == pool[1]?", torch.equal(track[0], pv[1]), "nan?", torch.isnan(track).all().item())
