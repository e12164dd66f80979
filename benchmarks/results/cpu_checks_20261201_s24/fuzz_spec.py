import torch, kimiops, random
random.seed(0); torch.manual_seed(0)
bad = 0
for case in range(30):
    N = random.randint(1, 5); t_max = random.randint(1, 4)
    lens = [random.randint(0, t_max) for _ in range(N)]
    T = sum(lens); pad = random.randint(0, 2)
    H = random.choice([1, 2]); HV = H * random.choice([1, 2]); K = random.choice([16, 32]); V = random.choice([16, 32])
    v_first = random.random() < 0.5
    slots = N * t_max + 3
    perm = torch.randperm(slots)[:N * t_max].view(N, t_max).to(torch.int32).clone()
    mask = torch.rand(N, t_max) < 0.2
    perm[mask] = -1
    acc = torch.randint(1, t_max + 1, (N,), dtype=torch.int32)
    use_acc = random.random() < 0.7
    shape = (HV, V, K) if v_first else (HV, K, V)
    pool = torch.randn(slots, *shape)
    cu = torch.tensor([0] + lens).cumsum(0).to(torch.int32)
    q = torch.randn(1, T + pad, H, K); k = torch.randn(1, T + pad, H, K); v = torch.randn(1, T + pad, HV, V)
    g = torch.randn(1, T + pad, HV, K); b = torch.randn(1, T + pad, HV)
    A = torch.rand(HV) * 2; dt = torch.randn(HV * K)
    outs = []
    for be in ("torch", "triton"):
        p = pool.clone()
        kw = dict(initial_state=p, cu_seqlens=cu, state_v_first=v_first, use_qk_l2norm_in_kernel=True,
                  use_gate_in_kernel=True, use_beta_sigmoid_in_kernel=True, A_log=A, dt_bias=dt,
                  ssm_state_indices=perm, num_accepted_tokens=acc if use_acc else None, backend=be)
        if pad:
            kdab = kimiops.KDABackend(H, K, V, num_v_heads=HV, backend=be)
            if not v_first:
                outs.append(None); continue
            o = kdab.decode(q[0], k[0], v[0], g[0], b[0], ssm_states=p, cache_indices=perm, query_start_loc=cu,
                            num_accepted_tokens=acc if use_acc else None, A_log=A, dt_bias=dt)[:T]
        else:
            o, _ = kimiops.fused_recurrent_kda(q, k, v, g, b, **kw)
            o = o[0]
        outs.append((o, p))
    if outs[0] is None:
        continue
    eo = (outs[0][0] - outs[1][0]).abs().max().item() if T else 0.0
    ep = (torch.nan_to_num(outs[0][1]) - torch.nan_to_num(outs[1][1])).abs().max().item()
    if eo > 1e-4 or ep > 1e-4:
        bad += 1
        print("MISMATCH", case, N, t_max, lens, pad, eo, ep)
print("cases done, mismatches:", bad)
