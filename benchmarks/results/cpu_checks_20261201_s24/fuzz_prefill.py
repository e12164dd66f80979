import torch, kimiops, random
random.seed(1); torch.manual_seed(1)
bad = 0
for case in range(16):
    N = random.randint(1, 4)
    lens = [random.choice([0, 1, 5, 31, 32, 33, 64, 70]) for _ in range(N)]
    T = sum(lens); pad = random.choice([0, 0, 3])
    H = random.choice([1, 2]); HV = H * random.choice([1, 2]); K = random.choice([16, 32]); V = random.choice([16, 32])
    slots = N + 3
    idx = torch.randperm(slots)[:N].to(torch.int32)
    if random.random() < 0.4: idx[random.randrange(N)] = -1
    pool = torch.randn(slots, HV, V, K)
    cu = torch.tensor([0] + lens).cumsum(0).to(torch.int32)
    q = torch.randn(T + pad, H, K); k = torch.randn(T + pad, H, K); v = torch.randn(T + pad, HV, V)
    g = torch.randn(T + pad, HV, K); b = torch.randn(T + pad, HV)
    gate = random.choice(["softplus", "lb"])
    gk = dict(A_log=torch.rand(HV) * 3, dt_bias=torch.randn(HV * K)) if gate == "softplus" else dict(lower_bound=-3.0, dt_bias=torch.randn(HV * K))
    res = []
    for be in ("torch", "triton"):
        p = pool.clone()
        kda = kimiops.KDABackend(H, K, V, num_v_heads=HV, backend=be)
        o = kda.extend(q, k, v, g, b, ssm_states=p, cache_indices=idx, query_start_loc=cu, **gk)
        res.append((o[:T], p))
    eo = (res[0][0] - res[1][0]).abs().max().item() / (res[0][0].abs().max().item() + 1e-9) if T else 0
    ep = (res[0][1] - res[1][1]).abs().max().item() / (res[0][1].abs().max().item() + 1e-9)
    untouched = [s for s in range(slots) if s not in idx.tolist()]
    same = all(torch.equal(res[1][1][s], pool[s]) for s in untouched)
    if eo > 5e-3 or ep > 5e-3 or not same:
        bad += 1; print("MISMATCH", case, lens, idx.tolist(), pad, eo, ep, same)
print("prefill cases, mismatches:", bad)
